use stratagem::prelude::*;

#[agent(plugins = [Policy { mode = strict }])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Helper {}

fn main() {}
