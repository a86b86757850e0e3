use stratagem::prelude::*;

// The action's signature is wrong; the agent listing it reports nothing more.
#[agent(strategy = Direct, actions [stamp])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Clerk {}

#[action]
fn stamp(_clerk: &mut Clerk, _count: u32, _ink: String) {}

fn main() {
    let _ = Clerk::new();
}
