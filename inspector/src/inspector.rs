//! The inspector's configuration and its running server.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};

use agent_runtime::server::AgentRef;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::{AbortHandle, JoinHandle};

use crate::error::InspectorError;
use crate::feed::Feed;
use crate::routes::{self, Access};
use crate::truncate::Truncation;

/// What to inspect and how; [`serve`](Inspector::serve) starts it.
///
/// Defaults: loopback only, no token, read-only, the last 200 steps of each agent kept, at
/// most 200 steps of each agent a second shown, payloads cut as [`Truncation::default`] cuts
/// them.
#[derive(Debug, Clone)]
pub struct Inspector {
    agents: Vec<AgentRef>,
    token: Option<String>,
    allow_signals: bool,
    history: usize,
    steps_per_second: u32,
    truncation: Truncation,
}

impl Default for Inspector {
    fn default() -> Self {
        Inspector::new()
    }
}

impl Inspector {
    /// `127.0.0.1:7878`: loopback, so only this machine can open the page.
    pub const DEFAULT_ADDR: SocketAddr =
        SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 7878));

    /// An inspector watching no agent yet.
    pub fn new() -> Self {
        Inspector {
            agents: Vec::new(),
            token: None,
            allow_signals: false,
            history: 200,
            steps_per_second: 200,
            truncation: Truncation::default(),
        }
    }

    /// Watches an agent (an `AgentServer` or an `AgentRef`). Agents are listed in the order
    /// they were added; the API names them by that index.
    #[must_use]
    pub fn agent(mut self, agent: impl AsRef<AgentRef>) -> Self {
        self.agents.push(agent.as_ref().clone());
        self
    }

    /// Requires this secret on every API request (`Authorization: Bearer <token>` or
    /// `?token=<token>`; the page passes on the `token` of its own address). Needed to bind
    /// to a non-loopback address.
    #[must_use]
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// Lets the page (and `POST /api/agents/{n}/signals`) send signals to the agents. Off by
    /// default: the inspector only reads.
    #[must_use]
    pub fn allow_signals(mut self, allow: bool) -> Self {
        self.allow_signals = allow;
        self
    }

    /// How many recent steps are kept per agent for a page that opens late (default 200).
    #[must_use]
    pub fn history(mut self, steps: usize) -> Self {
        self.history = steps;
        self
    }

    /// How many steps of one agent a second the page is shown (default 200; 0: every step).
    ///
    /// A burst up to this many is shown step by step; beyond it, steps are coalesced: the page
    /// is shown the latest at this pace, its `skipped` field counting the steps before it that
    /// were not shown (their signals and errors are not in the page's log). The agent's last
    /// step is always shown. Watching costs the agent little whatever its pace: the steps held
    /// back are never serialized, and while the inspector has not read the agent's last step
    /// the agent itself only counts the next ones
    /// ([`AgentRef::watch_coalesced`](agent_runtime::server::AgentRef::watch_coalesced)), so
    /// `skipped` can count steps at any pace.
    #[must_use]
    pub fn steps_per_second(mut self, steps: u32) -> Self {
        self.steps_per_second = steps;
        self
    }

    /// How payloads are cut before they reach the page.
    #[must_use]
    pub fn truncation(mut self, truncation: Truncation) -> Self {
        self.truncation = truncation;
        self
    }

    /// Starts the inspector's HTTP server on `addr` (port 0 picks a free port; see
    /// [`RunningInspector::addr`]) and starts watching the agents.
    ///
    /// Refuses a non-loopback address without a [`token`](Inspector::token).
    pub async fn serve(
        self,
        addr: impl tokio::net::ToSocketAddrs + std::fmt::Display,
    ) -> Result<RunningInspector, InspectorError> {
        let shown = addr.to_string();
        let bind_error = |source| InspectorError::Bind {
            addr: shown.clone(),
            source,
        };
        if self.token.as_deref() == Some("") {
            return Err(InspectorError::EmptyToken);
        }
        let resolved: Vec<SocketAddr> = tokio::net::lookup_host(&addr)
            .await
            .map_err(bind_error)?
            .collect();
        if self.token.is_none()
            && let Some(open) = resolved.iter().find(|a| !a.ip().is_loopback())
        {
            return Err(InspectorError::TokenRequired { addr: *open });
        }
        let listener = TcpListener::bind(resolved.as_slice())
            .await
            .map_err(bind_error)?;
        let addr = listener.local_addr().map_err(bind_error)?;

        let feed = Feed::new(
            self.agents,
            self.truncation,
            self.history,
            self.steps_per_second,
        )
        .await;
        let followers = feed.start();
        let (stop, stopping) = watch::channel(false);
        let access = Access {
            token: self.token.clone(),
            allow_signals: self.allow_signals,
        };
        let app = routes::router(feed, access, stopping.clone());
        let mut until = stopping;
        let server = tokio::spawn(async move {
            let shutdown = async move {
                let _ = until.wait_for(|stop| *stop).await;
            };
            if let Err(error) = axum::serve(listener, app)
                .with_graceful_shutdown(shutdown)
                .await
            {
                tracing::error!(%error, "the inspector's server failed");
            }
        });
        tracing::info!(%addr, "inspector listening");
        Ok(RunningInspector {
            addr,
            token: self.token,
            stop,
            server: Some(server),
            followers,
        })
    }
}

/// A running inspector. Dropping it stops the server and the watching.
#[derive(Debug)]
pub struct RunningInspector {
    addr: SocketAddr,
    token: Option<String>,
    stop: watch::Sender<bool>,
    server: Option<JoinHandle<()>>,
    followers: Vec<AbortHandle>,
}

impl RunningInspector {
    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The page's address, with the token when there is one (`http://127.0.0.1:7878/`).
    pub fn url(&self) -> String {
        let host = match self.addr {
            SocketAddr::V4(v4) if v4.ip().is_unspecified() => {
                SocketAddr::from((Ipv4Addr::LOCALHOST, v4.port()))
            }
            addr => addr,
        };
        match &self.token {
            Some(token) => format!("http://{host}/?token={}", percent_encode(token)),
            None => format!("http://{host}/"),
        }
    }

    /// Stops the server (open pages see their stream end) and waits until it has.
    pub async fn shutdown(mut self) {
        self.stop_watching();
        if let Some(server) = self.server.take() {
            let _ = server.await;
        }
    }

    fn stop_watching(&self) {
        let _ = self.stop.send(true);
        for follower in &self.followers {
            follower.abort();
        }
    }
}

impl Drop for RunningInspector {
    fn drop(&mut self) {
        self.stop_watching();
    }
}

/// `token` as a query value: unreserved characters kept, every other byte `%XX`.
fn percent_encode(token: &str) -> String {
    let mut out = String::with_capacity(token.len());
    for byte in token.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_percent_encoded_in_the_url() {
        assert_eq!(percent_encode("a b&c~"), "a%20b%26c~");
    }

    #[tokio::test]
    async fn a_public_address_needs_a_token() {
        let error = Inspector::new().serve("0.0.0.0:0").await.unwrap_err();
        assert!(
            matches!(error, InspectorError::TokenRequired { .. }),
            "{error}"
        );
        let error = Inspector::new().token("").serve("127.0.0.1:0").await;
        assert!(matches!(error, Err(InspectorError::EmptyToken)));
        let running = Inspector::new()
            .token("s3cret")
            .serve("0.0.0.0:0")
            .await
            .unwrap();
        assert!(
            running.url().ends_with("/?token=s3cret"),
            "{}",
            running.url()
        );
        running.shutdown().await;
    }
}
