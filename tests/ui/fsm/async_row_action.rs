use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Closed
    terminal Open
    Closed -> Open on push do open_remotely
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Door {}

#[action]
async fn open_remotely(_: &Door) {}

fn main() {}
