use stratagem::prelude::*;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Sentry {}

#[derive(Debug, Deserialize, JsonSchema, Params)]
struct Report {
    note: String,
    channel: Option<String>,
}

#[action]
fn report(_: &mut Sentry, _: Report) {}

bt! {
    for Sentry
    behavior Done { action report(note = "done", priority = 1) }
}

fn main() {}
