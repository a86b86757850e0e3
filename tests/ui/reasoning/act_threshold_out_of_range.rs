use stratagem::prelude::*;

#[agent(strategy = Trm, act_threshold = 1.5)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Polisher {}

fn main() {}
