use stratagem::prelude::*;

#[agent(strategy = Adaptive, complexity_thresholds = (0.7, 0.2))]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Chooser {}

fn main() {}
