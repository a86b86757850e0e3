use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    terminal Open
    Closed -> Open after 0ms
    Open -> Closed on close
    Closed -> Stuck on jam
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Door {}

fn main() {}
