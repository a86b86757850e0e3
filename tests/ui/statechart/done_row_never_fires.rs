use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Off
    Off -> Cycle on start
    state Cycle {
        initial Washing
        Washing -> Rinsing on next
        Rinsing -> Washing on next
    }
    Cycle -> Off when done
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Player {}

fn main() {}
