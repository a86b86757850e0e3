use stratagem::prelude::*;

#[agent(plugins = [Retrieval { top_k = "three" }])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Helper {}

fn main() {}
