use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Closed
    terminal r#type
    Closed -> r#type on push
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Door {}

fn main() {}
