use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Off
    Off -> Running on start
    parallel Running {
        Running -> Off on stop
    }
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Player {}

fn main() {}
