use stratagem::prelude::*;

#[agent(strategy = Direct, tick = 10d)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Clerk {}

fn main() {}
