use stratagem::prelude::*;

#[agent(strategy = TreeOfThoughts, generation_prompt = 3)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Planner {}

fn main() {}
