use stratagem::prelude::*;

#[agent(strategy = Adaptive, available_strategies = [cot, reflexion])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Chooser {}

fn main() {}
