use stratagem::prelude::*;

// The count is zero; the behaviour's diagrams and the agent running it still type-check against
// the fallback, so the count is the only error reported.
#[agent(strategy = BehaviorTree, tree = Patrol)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Sentry {
    steps: u32,
}

bt! {
    for Sentry
    behavior Patrol { repeat(0) { action step } }
}

#[action]
fn step(sentry: &mut Sentry) {
    sentry.steps += 1;
}

fn main() {
    println!("{}\n{}", Patrol::MERMAID, Patrol::DOT);
    let mut sentry = Sentry::new();
    let _ = sentry.tick();
}
