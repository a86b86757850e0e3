use stratagem::prelude::*;

#[agent(strategy = Direct, actions [stamp, stamp])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Clerk {
    stamps: u32,
}

#[action]
fn stamp(clerk: &mut Clerk) {
    clerk.stamps += 1;
}

fn main() {}
