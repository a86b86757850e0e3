use stratagem::prelude::*;

#[agent(strategy = Adaptive, default_strategy = Adaptive)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Chooser {}

fn main() {}
