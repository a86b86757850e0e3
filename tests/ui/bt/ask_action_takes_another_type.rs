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

#[derive(Deserialize, JsonSchema)]
struct Other {}

/// Takes an `Other`, not the answer's `Decision`.
#[action]
fn decide(_: &mut Refunds, _: Other) {}

fn main() {}
