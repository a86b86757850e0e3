use stratagem::prelude::*;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Sentry {}

#[derive(Debug, Deserialize, JsonSchema, Params)]
struct Move {
    speed: u8,
    mode: Option<String>,
}

#[action]
fn move_to(_: &mut Sentry, _: Move) {}

fn main() {
    let _tree = bt! { action move_to(sped = 2) };
}
