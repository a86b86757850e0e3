use stratagem::prelude::*;

#[agent(plugins = [Policy { block_control_chars = "yes" }])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Helper {}

fn main() {}
