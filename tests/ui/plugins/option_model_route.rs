use stratagem::prelude::*;

#[agent(plugins = [ModelRouting { routes = ["chat.*"] }])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Helper {}

fn main() {}
