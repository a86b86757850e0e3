use stratagem::prelude::*;

#[agent(strategy = Direct, actions [auto_clos])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Door {
    closed: bool,
}

/// The agent misspells its name.
#[action]
fn auto_close(door: &mut Door) {
    door.closed = true;
}

fn main() {}
