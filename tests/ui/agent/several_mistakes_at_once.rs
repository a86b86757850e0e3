use stratagem::prelude::*;

// Every check runs: all three mistakes are reported together.
#[agent(
    strategy = Direct,
    actions [stamp],
    routes {
        "desk..stamp" => stamp
        "desk.file" => file priority -300
    }
)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Clerk {}

#[action]
fn stamp(_clerk: &mut Clerk) {}

fn main() {}
