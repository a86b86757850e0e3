use stratagem::prelude::*;

#[agent(strategy = React, tools = [file_report])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Helpdesk {}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Auditor {}

#[action(description = "Files a report")]
fn file_report(_auditor: &mut Auditor) {}

fn main() {}
