use stratagem::prelude::*;

#[agent(strategy = React, tools = [refund], approve = [refnd])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Refunds {}

#[action]
fn refund(_: &mut Refunds) {}

fn main() {}
