//! The CloudEvents HTTP protocol binding (feature `http`): [`HttpIngress`] delivers signals
//! that other services POST to agents (structured, binary and batched modes, an opt-in call
//! mode, a bearer token, loopback by default), and [`HttpSink`] POSTs the signals an agent
//! emits to an endpoint, with timeouts, retries and a [`DELIVERY_FAILED`] signal after the
//! last try. The `ce-*` header mapping is [`crate::signal::Binding`], which the NATS
//! transport's binary mode shares.
//!
//! ```no_run
//! use agent_runtime::http::HttpIngress;
//! use agent_runtime::server::AgentRef;
//!
//! async fn expose(desk: &AgentRef) -> std::io::Result<()> {
//!     let server = HttpIngress::new().agent(desk).call_mode(true).serve().await?;
//!     println!("POST signals to http://{}/agents/{}", server.address(), desk.id());
//!     # Ok(())
//! }
//! ```

mod ingress;
mod sink;

pub use crate::signal::ContentMode;
pub use ingress::{BATCH, CALL_COMPLETED, CALL_FAILED, HttpIngress, HttpServer, STRUCTURED};
pub use sink::{DELIVERY_FAILED, HttpSink};
