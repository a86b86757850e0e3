use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Closed
    Closed -> Open on _1
    Open -> Closed on self_
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Door {}

fn main() {}
