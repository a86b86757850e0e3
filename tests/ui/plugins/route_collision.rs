use stratagem::prelude::*;

#[agent(actions [report], plugins = [Quota], routes { "quota.status" => report })]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Helper {}

#[action]
fn report(_helper: &mut Helper) {}

fn main() {}
