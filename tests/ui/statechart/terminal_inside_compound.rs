use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Off
    Off -> On on power
    state On {
        initial Playing
        terminal Broken
        Playing -> Broken on smash
    }
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Player {}

fn main() {}
