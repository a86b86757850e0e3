use stratagem::prelude::*;

#[agent(strategy = BehaviorTree, tree = {
    ask approval(Request) -> Decision do decide
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Refunds {}

/// Serializable, but not built from the agent's state.
#[derive(Serialize)]
struct Request {}

#[derive(Deserialize, JsonSchema)]
struct Decision {}

#[action]
fn decide(_: &mut Refunds, _: Decision) {}

fn main() {}
