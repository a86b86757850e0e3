use stratagem::prelude::*;

#[agent(strategy = Adaptive, available_strategies = [cot, ChainOfThought])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Chooser {}

fn main() {}
