use stratagem::prelude::*;

#[agent(strategy = Direct, actions [auto_close])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Door {
    open: bool,
}

#[action]
fn auto_close(door: Door) {
    let _ = door.open;
}

fn main() {}
