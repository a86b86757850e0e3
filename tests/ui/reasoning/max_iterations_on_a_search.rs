use stratagem::prelude::*;

#[agent(strategy = GraphOfThoughts, max_iterations = 5)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Weaver {}

fn main() {}
