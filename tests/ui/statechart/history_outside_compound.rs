use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Off
    history Resume
    Off -> Resume on resume
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Player {}

fn main() {}
