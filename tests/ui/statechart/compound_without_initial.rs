use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Off
    Off -> On on power
    state On {
        Stopped -> Off on power
    }
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Player {}

fn main() {}
