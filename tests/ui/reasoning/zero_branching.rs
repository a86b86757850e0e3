use stratagem::prelude::*;

#[agent(strategy = TreeOfThoughts, branching_factor = 0)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Planner {}

fn main() {}
