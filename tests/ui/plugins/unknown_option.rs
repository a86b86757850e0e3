use stratagem::prelude::*;

#[agent(plugins = [Quota { max_request = 10 }])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Helper {}

fn main() {}
