use stratagem::prelude::*;

#[derive(Debug, Deserialize, JsonSchema, Params)]
struct Move {
    speed: u8,
}

#[action]
fn move_to(_: &mut Rover, _: Move) {}

#[agent(strategy = BehaviorTree, tree = { action move_to(speed = "fast") })]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Rover {}

fn main() {}
