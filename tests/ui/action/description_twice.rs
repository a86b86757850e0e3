use stratagem::prelude::*;

#[action(description = "stamps a form", description = "stamps twice")]
fn stamp() {}

fn main() {}
