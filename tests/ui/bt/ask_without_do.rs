use stratagem::prelude::*;

#[agent(strategy = BehaviorTree, tree = {
    ask approval(Request) -> Decision
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Refunds {}

fn main() {}
