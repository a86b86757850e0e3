use stratagem::prelude::*;

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct OrderId {
    id: u32,
}

#[agent(strategy = React, tools = [lookup_order], max_iterations = 0)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Helpdesk {}

#[action(description = "Looks up an order")]
fn lookup_order(_desk: &mut Helpdesk, _params: OrderId) {}

fn main() {}
