use stratagem::prelude::*;

#[action(retries = 3)]
async fn fetch_forms() {}

fn main() {}
