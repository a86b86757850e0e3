use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Closed
    terminal Open
    Closed -> Open on push_hard
    Closed -> Open on pushHard if has_key
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Door {}

fn has_key(_: &Door) -> bool {
    true
}

fn main() {}
