use stratagem::prelude::*;

#[agent(strategy = Fsm)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Door {}

fn main() {}
