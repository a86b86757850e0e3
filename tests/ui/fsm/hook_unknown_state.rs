use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Closed
    terminal Open
    enter Opem do chime
    Closed -> Open on open
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Door {}

#[action]
fn chime(_: &mut Door) {}

fn main() {}
