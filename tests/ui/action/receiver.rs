use stratagem::prelude::*;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Clerk {
    stamps: u32,
}

impl Clerk {
    #[action]
    fn stamp(&mut self) {
        self.stamps += 1;
    }
}

fn main() {}
