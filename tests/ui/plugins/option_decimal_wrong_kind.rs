use stratagem::prelude::*;

#[agent(plugins = [Chat { temperature = "warm" }])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Helper {}

fn main() {}
