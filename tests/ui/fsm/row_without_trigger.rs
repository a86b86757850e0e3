use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Closed
    terminal Open
    Closed -> Open push
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Door {}

fn main() {}
