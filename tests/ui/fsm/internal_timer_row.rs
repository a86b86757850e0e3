use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Idle
    terminal Done
    Idle -> Done on stop
    Idle after 5s do ping
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Pinger {}

fn main() {}
