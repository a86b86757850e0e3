use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Off
    terminal On
    Off -> On on power
    state On {
        initial Playing
        Playing -> Off on power
    }
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Player {}

fn main() {}
