use stratagem::prelude::*;

#[agent(strategy = Direct)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Clerk<T> {
    desk: T,
}

fn main() {}
