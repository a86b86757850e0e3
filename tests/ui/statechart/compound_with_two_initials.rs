use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Off
    Off -> On on power
    state On {
        initial Playing
        initial Paused
        Playing -> Paused on pause
        Paused -> Off on power
    }
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Player {}

fn main() {}
