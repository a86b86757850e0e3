use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Closed
    terminal Open
    terminal Locked
    Closed -> Open on push
    Closed -> Locked on push if has_key
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Door {}

fn has_key(_: &Door) -> bool {
    true
}

fn main() {}
