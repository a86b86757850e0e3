use stratagem::prelude::*;

#[agent(strategy = Magic)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Wizard {}

fn main() {}
