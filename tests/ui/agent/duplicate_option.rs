use stratagem::prelude::*;

#[agent(strategy = Direct, description = "a clerk", strategy = Direct)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Clerk {}

fn main() {}
