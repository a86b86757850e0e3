use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Closed
    terminal ALL
    Closed -> ALL on push
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Door {}

fn main() {}
