use stratagem::prelude::*;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Clerk {}

#[action]
fn stamp(_count: u32, _clerk: &mut Clerk) {}

fn main() {}
