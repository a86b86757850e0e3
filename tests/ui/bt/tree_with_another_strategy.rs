use stratagem::prelude::*;

#[agent(strategy = Direct, tree = { wait(1s) })]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Sentry {}

fn main() {}
