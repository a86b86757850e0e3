use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Off
    Off -> Cycle on start
    state Cycle {
        initial Washing
        final Washing
        state Washing {
            initial Soak
            Soak -> Spin on next
            final Spin
        }
    }
    Cycle -> Off when done
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Player {}

fn main() {}
