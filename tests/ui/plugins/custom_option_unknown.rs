use stratagem::plugin::Plugin;
use stratagem::prelude::*;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Audit {
    pub level: String,
}

impl Plugin for Audit {
    const NAME: &'static str = "Audit";
    const STATE_KEY: &'static str = "audit";
    type State = ();
    fn mount(&self) {}
}

#[agent(plugins = [custom(Audit) { levle = "info" }])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Helper {}

fn main() {}
