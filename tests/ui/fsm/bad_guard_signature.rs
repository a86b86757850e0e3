use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Closed
    terminal Open
    Closed -> Open on push if has_key
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Door {}

fn has_key(_: &Door) -> u8 {
    1
}

fn main() {}
