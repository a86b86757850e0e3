use stratagem::prelude::*;

#[agent(strategy = Direct, max_depth = 2)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Planner {}

fn main() {}
