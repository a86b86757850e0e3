use stratagem::prelude::*;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Clerk {}

#[action]
fn stamp(_clerk: &mut Clerk, _ink: &String) {}

fn main() {}
