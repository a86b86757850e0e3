use stratagem::prelude::*;

#[agent(strategy = Fsm, transitions {
    initial Off
    interrupt approval(Request) -> Decision
    Off -> Running on start
    parallel Running {
        state Left {
            initial A
            A on ping ask approval
            A on approval
        }
        state Right {
            initial B
            B on pong
        }
    }
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Review {}

#[derive(Serialize)]
struct Request {}

impl From<&Review> for Request {
    fn from(_: &Review) -> Self {
        Request {}
    }
}

#[derive(Deserialize)]
struct Decision {}

fn main() {}
