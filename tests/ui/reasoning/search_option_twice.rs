use stratagem::prelude::*;

#[agent(strategy = TreeOfThoughts, max_depth = 2, max_depth = 3)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Planner {}

fn main() {}
