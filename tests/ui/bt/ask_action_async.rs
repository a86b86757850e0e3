use stratagem::prelude::*;

#[agent(strategy = BehaviorTree, tree = {
    ask approval(Request) -> Decision do decide
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Refunds {}

#[derive(Serialize)]
struct Request {}

impl From<&Refunds> for Request {
    fn from(_: &Refunds) -> Self {
        Request {}
    }
}

#[derive(Deserialize, JsonSchema)]
struct Decision {}

/// Async: an answer is taken inside the tick.
#[action]
async fn decide(_: &Refunds, _: Decision) {}

fn main() {}
