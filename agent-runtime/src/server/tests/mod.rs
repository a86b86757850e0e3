//! The server's tests: hand-written agents driven through the public API, with tokio's clock
//! paused wherever timing matters.

mod agents;
mod children;
mod isolation;
mod mailbox;
mod persistence;
mod policies;
mod routing;
mod ticks;
mod timers;
mod watching;
mod work;

use agents::Worker;

use super::{AgentServer, Options};
use crate::agent::AgentSpec;

async fn worker(options: Options) -> AgentServer<Worker> {
    AgentServer::start(Worker::new().with_id("w"), options)
        .await
        .expect("a worker starts")
}
