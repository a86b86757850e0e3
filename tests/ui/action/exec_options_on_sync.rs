use stratagem::prelude::*;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Clerk {}

#[action(timeout = 5s)]
fn stamp(_clerk: &mut Clerk) {}

fn main() {}
