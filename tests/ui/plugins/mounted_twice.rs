use stratagem::prelude::*;

#[agent(plugins = [Quota { max_requests = 10 }, Quota { max_tokens = 5000 }])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Helper {}

fn main() {}
