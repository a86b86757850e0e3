use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    terminal Open
    Closed -> Open on open
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Door {}

fn main() {}
