use stratagem::prelude::*;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Clerk {
    stamps: u32,
}

#[action]
fn stamp(clerk: &mut Clerk) -> u32 {
    clerk.stamps += 1;
    clerk.stamps
}

fn main() {}
