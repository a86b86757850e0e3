use stratagem::prelude::*;

#[agent(strategy = Direct, actions [file_report])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Clerk {}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Auditor {}

#[action]
fn file_report(_auditor: &mut Auditor) {}

fn main() {}
