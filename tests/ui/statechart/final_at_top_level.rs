use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Off
    final Done
    Off -> Done on finish
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Player {}

fn main() {}
