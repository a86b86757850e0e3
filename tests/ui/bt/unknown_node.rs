use stratagem::prelude::*;

fn main() {
    let _tree = bt! { sequense { wait(1s) } };
}
