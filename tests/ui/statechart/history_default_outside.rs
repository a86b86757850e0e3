use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Off
    Off -> On on power
    Off -> Resume on resume
    state On {
        initial Playing
        history Resume -> Off
        Playing -> Off on power
    }
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Player {}

fn main() {}
