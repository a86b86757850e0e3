use stratagem::prelude::*;

#[agent(strategy = Direct, actions [open, auto_close])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Door {
    closed: bool,
}

#[action]
fn open(door: &mut Door) {
    door.closed = false;
}

/// Not an action yet: `#[action]` is missing.
fn auto_close(door: &mut Door) {
    door.closed = true;
}

fn main() {}
