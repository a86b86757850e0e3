use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Open
    interrupt approval(Request) -> Decision
    Open on request ask aproval
    Open on approval
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Refunds {}

#[derive(Serialize)]
struct Request {}

impl From<&Refunds> for Request {
    fn from(_: &Refunds) -> Self {
        Request {}
    }
}

#[derive(Deserialize)]
struct Decision {}

fn main() {}
