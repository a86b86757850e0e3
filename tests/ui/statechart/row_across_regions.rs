use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Off
    Off -> Running on start
    parallel Running {
        Running -> Off on stop
        state Playback {
            initial Stopped
            Stopped -> Loud on blast
        }
        state Volume {
            initial Quiet
            Quiet -> Loud on up
            Loud -> Quiet on down
        }
    }
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Player {}

fn main() {}
