use stratagem::prelude::*;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Clerk {}

#[action]
async fn fetch_forms(_clerk: &mut Clerk) {}

fn main() {}
