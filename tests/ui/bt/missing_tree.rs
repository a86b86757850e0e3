use stratagem::prelude::*;

#[agent(strategy = BehaviorTree, tick = 100ms)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Sentry {}

fn main() {}
