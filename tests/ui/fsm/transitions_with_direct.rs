use stratagem::prelude::*;

#[agent(strategy = Direct, transitions {
    initial Closed
    terminal Open
    Closed -> Open on push
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Door {}

fn main() {}
