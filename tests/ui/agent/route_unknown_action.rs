use stratagem::prelude::*;

#[agent(strategy = Direct, actions [stamp], routes { "desk.stamp" => stmp })]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Clerk {}

#[action]
fn stamp(_clerk: &mut Clerk) {}

fn main() {}
