use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Off
    Off -> Cycle on start
    state Cycle {
        initial Washing
        Washing -> Rinsed on next
        final Rinsed
        Rinsed -> Washing on again
    }
    Cycle -> Off when done
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Player {}

fn main() {}
