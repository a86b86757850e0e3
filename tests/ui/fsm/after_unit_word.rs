use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Closed
    Closed -> Opened on push
    Opened -> Closed after 30 seconds
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Door {}

fn main() {}
