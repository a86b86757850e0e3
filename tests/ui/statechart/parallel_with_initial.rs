use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Off
    Off -> Running on start
    parallel Running {
        initial Playback
        Running -> Off on stop
        state Playback {
            initial Stopped
            Stopped -> Playing on play
            Playing -> Stopped on pause
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
