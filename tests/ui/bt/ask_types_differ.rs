use stratagem::prelude::*;

#[agent(strategy = BehaviorTree, tree = {
    sequence {
        ask approval(Small) -> Decision do decide
        ask approval(Large) -> Decision do decide
    }
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Refunds {}

fn main() {}
