use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Open
    interrupt approval(Request) -> Decision
    Open on request ask approval
    Open on approval
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Refunds {}

/// Serializable, but not built from the agent's state.
#[derive(Serialize)]
struct Request {}

#[derive(Deserialize)]
struct Decision {}

fn main() {}
