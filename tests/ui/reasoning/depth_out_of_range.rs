use stratagem::prelude::*;

#[agent(strategy = GraphOfThoughts, max_depth = 40)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Weaver {}

fn main() {}
