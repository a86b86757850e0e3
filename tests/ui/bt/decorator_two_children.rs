use stratagem::prelude::*;

fn main() {
    let _tree = bt! { invert { wait(1s) wait(2s) } };
}
