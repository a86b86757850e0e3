use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Open
    interrupt approval(Request)
    Open on request ask approval
    Open on approval
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Refunds {}

fn main() {}
