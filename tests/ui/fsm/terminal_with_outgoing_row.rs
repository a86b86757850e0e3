use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Closed
    terminal Open
    Closed -> Open on open
    Open -> Closed on close
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Door {}

fn main() {}
