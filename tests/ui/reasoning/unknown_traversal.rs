use stratagem::prelude::*;

#[agent(strategy = TreeOfThoughts, traversal_strategy = sideways)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Planner {}

fn main() {}
