use stratagem::prelude::*;

#[action]
struct Stamp {
    ink: String,
}

fn main() {}
