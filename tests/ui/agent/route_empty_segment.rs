use stratagem::prelude::*;

#[agent(strategy = Direct, actions [stamp], routes { "desk..stamp" => stamp })]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Clerk {}

#[action]
fn stamp(_clerk: &mut Clerk) {}

fn main() {}
