use stratagem::prelude::*;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Clerk {}

#[action]
unsafe fn stamp(_clerk: &mut Clerk) {}

fn main() {}
