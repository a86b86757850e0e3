use stratagem::prelude::*;

#[agent(plugins = [Qouta { max_requests = 10 }])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Helper {}

fn main() {}
