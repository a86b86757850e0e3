//! The inspector's view of its agents: each agent's shape (read once), its recent steps, and
//! one live stream of every step, already serialized and truncated for the page.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use agent_runtime::server::{AgentRef, Observation};
use serde_json::{Value, json};
use tokio::sync::broadcast::{
    self,
    error::{RecvError, TryRecvError},
};
use tokio::time::Instant;

use crate::pace::Pace;
use crate::truncate::Truncation;

/// How many events the live stream buffers for a slow page before it reports a lag.
const LIVE_CAPACITY: usize = 1024;

/// One agent's pace, and the latest step it held back with how many steps before it the page
/// was not shown.
struct Paced {
    pace: Pace,
    held: Option<(Arc<Observation>, u64)>,
}

/// Waits until `due`, or forever when there is nothing to wait for.
async fn sleep_until(due: Option<Instant>) {
    match due {
        Some(due) => tokio::time::sleep_until(due).await,
        None => std::future::pending().await,
    }
}

/// One watched agent.
pub(crate) struct Watched {
    pub(crate) handle: AgentRef,
    /// `Shape`, serialized when the inspector started (it never changes).
    pub(crate) shape: Value,
    recent: Mutex<VecDeque<Arc<str>>>,
}

impl Watched {
    /// The agent's recent events, oldest first, as JSON texts.
    pub(crate) fn recent(&self) -> Vec<Arc<str>> {
        self.lock().iter().cloned().collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Arc<str>>> {
        self.recent.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Everything the routes read.
pub(crate) struct Feed {
    pub(crate) agents: Vec<Watched>,
    pub(crate) live: broadcast::Sender<Arc<str>>,
    pub(crate) truncation: Truncation,
    history: usize,
    steps_per_second: u32,
}

impl Feed {
    /// Reads each agent's shape; a stopped agent shows as opaque.
    pub(crate) async fn new(
        handles: Vec<AgentRef>,
        truncation: Truncation,
        history: usize,
        steps_per_second: u32,
    ) -> Arc<Feed> {
        let mut agents = Vec::with_capacity(handles.len());
        for handle in handles {
            let shape = match handle.shape().await {
                Ok(shape) => serde_json::to_value(shape).unwrap_or(Value::Null),
                Err(_) => json!({ "kind": "opaque" }),
            };
            agents.push(Watched {
                handle,
                shape,
                recent: Mutex::new(VecDeque::with_capacity(history.min(1024))),
            });
        }
        Arc::new(Feed {
            agents,
            live: broadcast::channel(LIVE_CAPACITY).0,
            truncation,
            history,
            steps_per_second,
        })
    }

    /// Starts one task per agent that turns its observations into events; the caller aborts
    /// them when the inspector stops.
    pub(crate) fn start(self: &Arc<Self>) -> Vec<tokio::task::AbortHandle> {
        (0..self.agents.len())
            .map(|index| {
                let feed = self.clone();
                // Subscribe before returning, so no step after `serve` is missed. Coalesced:
                // the agent holds steps back while this task has not read the last one, so a
                // flood costs it a count per step (the pace below is for the page).
                let steps = feed.agents[index].handle.watch_coalesced();
                tokio::spawn(async move { feed.follow(index, steps).await }).abort_handle()
            })
            .collect()
    }

    async fn follow(&self, index: usize, mut steps: broadcast::Receiver<Arc<Observation>>) {
        let handle = self.agents[index].handle.clone();
        let stopped = handle.stopped();
        tokio::pin!(stopped);
        let mut paced = Paced {
            pace: Pace::new(self.steps_per_second),
            held: None,
        };
        loop {
            let due = paced.held.as_ref().map(|_| paced.pace.next_token());
            tokio::select! {
                step = steps.recv() => match step {
                    Ok(observation) => {
                        self.offer(index, &mut paced, observation);
                        // The steps that queued meanwhile, without a `select!` (and a timer)
                        // for each.
                        loop {
                            match steps.try_recv() {
                                Ok(observation) => self.offer(index, &mut paced, observation),
                                Err(TryRecvError::Lagged(missed)) => self.lagged(index, missed),
                                Err(_) => break,
                            }
                        }
                    }
                    Err(RecvError::Lagged(missed)) => self.lagged(index, missed),
                    Err(RecvError::Closed) => return,
                },
                () = sleep_until(due) => {
                    if paced.pace.take() && let Some((observation, skipped)) = paced.held.take() {
                        self.publish(index, self.step(index, &observation, skipped));
                    }
                }
                report = &mut stopped => {
                    // Steps the agent made before it stopped are still in the channel; the
                    // last of them is shown whatever the pace.
                    while let Ok(observation) = steps.try_recv() {
                        self.offer(index, &mut paced, observation);
                    }
                    if let Some((observation, skipped)) = paced.held.take() {
                        self.publish(index, self.step(index, &observation, skipped));
                    }
                    let reason = report.reason.to_string();
                    self.publish(
                        index,
                        json!({ "event": "stopped", "agent": index, "reason": reason }),
                    );
                    return;
                }
            }
        }
    }

    fn lagged(&self, index: usize, missed: u64) {
        self.publish(
            index,
            json!({ "event": "lagged", "agent": index, "missed": missed }),
        );
    }

    /// Shows a step now if the pace allows, else holds it back in place of the one held. The
    /// count held with a step is of the steps before it the page was not shown, including
    /// those the agent coalesced ([`Observation::skipped`]).
    fn offer(&self, index: usize, paced: &mut Paced, observation: Arc<Observation>) {
        if paced.held.is_none() && paced.pace.take() {
            let skipped = observation.skipped;
            self.publish(index, self.step(index, &observation, skipped));
        } else {
            let before = paced.held.take().map_or(0, |(_, n)| n + 1);
            let skipped = before + observation.skipped;
            paced.held = Some((observation, skipped));
        }
    }

    /// An observation as the page reads it, its payloads truncated; `skipped` counts the steps
    /// before it that the page was not shown.
    fn step(&self, index: usize, observation: &Observation, skipped: u64) -> Value {
        let mut value = serde_json::to_value(observation).unwrap_or(Value::Null);
        // A long conversation keeps its latest messages: the page shows the end of it.
        if let Some(messages) = value
            .pointer_mut("/progress/messages")
            .and_then(Value::as_array_mut)
        {
            let keep = self.truncation.max_items;
            if messages.len() > keep {
                let omitted = messages.len() - keep;
                messages.drain(..omitted);
                value["progress"]["omitted_messages"] = omitted.into();
            }
        }
        let mut value = self.truncation.apply(&value);
        value["event"] = "step".into();
        value["agent"] = index.into();
        // The total, past the agent's coalescing and this pace; absent when nothing was.
        if skipped > 0 {
            value["skipped"] = skipped.into();
        } else if let Some(fields) = value.as_object_mut() {
            fields.remove("skipped");
        }
        value
    }

    fn publish(&self, index: usize, event: Value) {
        let text: Arc<str> = event.to_string().into();
        {
            let mut recent = self.agents[index].lock();
            if recent.len() >= self.history {
                recent.pop_front();
            }
            if self.history > 0 {
                recent.push_back(text.clone());
            }
        }
        // No page open: nobody to tell.
        let _ = self.live.send(text);
    }
}
