use stratagem::prelude::*;

#[agent(strategy = TreeOfThoughts, branching_facter = 3)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Planner {}

fn main() {}
