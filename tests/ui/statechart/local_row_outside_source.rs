use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Off
    Off -> On on power
    On -> local Off on unplug
    state On {
        initial Playing
        Playing -> Playing on again
    }
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Player {}

fn main() {}
