use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Closed
    terminal Open
    terminal Broken as failure
    Closed -> Open after 5s
    Closed -> Broken after 1m
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Door {}

fn main() {}
