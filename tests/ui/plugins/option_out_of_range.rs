use stratagem::prelude::*;

#[agent(plugins = [Quota { window_ms = 0 }])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Helper {}

fn main() {}
