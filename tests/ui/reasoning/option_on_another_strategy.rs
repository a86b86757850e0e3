use stratagem::prelude::*;

#[agent(strategy = Trm, branching_factor = 3)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Polisher {}

fn main() {}
