use stratagem::prelude::*;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Sentry {
    battery: u8,
}

fn battery(sentry: &Sentry) -> u8 {
    sentry.battery
}

#[agent(strategy = BehaviorTree, tree = { condition battery })]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Rover {}

fn main() {}
