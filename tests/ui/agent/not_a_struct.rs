use stratagem::prelude::*;

#[agent(strategy = Direct)]
enum Clerk {
    Busy,
    Free,
}

fn main() {}
