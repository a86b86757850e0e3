use stratagem::prelude::*;

#[action]
fn stamp<T: Default>(_state: &mut T) {}

fn main() {}
