use stratagem::prelude::*;

#[agent(strategy = ChainOfThought, approve = [refund])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Refunds {}

fn main() {}
