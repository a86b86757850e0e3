use stratagem::prelude::*;

#[agent(strateg = Direct)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Clerk {}

fn main() {}
