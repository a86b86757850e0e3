use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Off
    Off -> On on power
    state On {
        initial Stopped
        On -> Off on power
        Stopped -> Playing on play
        Playing -> Stopped on stop
        Paused -> Playing on play
    }
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Player {}

fn main() {}
