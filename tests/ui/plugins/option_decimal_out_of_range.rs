use stratagem::prelude::*;

#[agent(plugins = [Chat { temperature = 3.5 }])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Helper {}

fn main() {}
