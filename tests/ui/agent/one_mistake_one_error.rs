use stratagem::prelude::*;

// The route is wrong, but code using the agent still type-checks against the fallback impl, so
// the route is the only error reported.
#[agent(strategy = Direct, actions [stamp], routes { "desk.stamp" => stmp })]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Clerk {}

#[action]
fn stamp(_clerk: &mut Clerk) {}

fn main() {
    let mut clerk = Clerk::new();
    let _ = clerk.cmd(Instruction::new("stamp", json!({})));
    let _ = clerk.snapshot();
}
