use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Closed
    terminal Open
    enter Open do chime
    enter Open do ring
    Closed -> Open on push
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Door {}

#[action]
fn chime(_: &mut Door) {}

#[action]
fn ring(_: &mut Door) {}

fn main() {}
