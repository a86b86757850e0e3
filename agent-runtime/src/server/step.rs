//! The steps of the loop besides mailbox signals: timers, requests from handles, reports from
//! the server's own tasks, and checkpoints.

use std::panic::{AssertUnwindSafe, catch_unwind};

use serde_json::json;
use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::error::ActionError;
use crate::journal::Input;
use crate::signal::Signal;
use crate::store::{Checkpoint, CheckpointError, CronEntry, PendingInstruction, PendingTimer};

use super::children::CHILD_EXIT_SIGNAL;
use super::clock;
use super::core::{BATCH, Core};
use super::message::{CheckpointReply, Control, Internal};
use super::observe::Cause;
use super::report::StopReason;
use super::timers::TimerKind;

impl Core {
    /// Fires the timers that are due, in deadline order, at most a batch of them: a timer that
    /// re-arms itself with no delay must not keep the mailbox waiting.
    pub(super) fn fire_due_timers(&mut self) {
        let now = Instant::now();
        for _ in 0..BATCH {
            if self.stop.is_some() {
                break;
            }
            let Some(kind) = self.timers.pop_due(now) else {
                break;
            };
            match kind {
                TimerKind::Signal(signal) => {
                    self.stats.timers_fired += 1;
                    self.step_signal("timer", signal, false);
                }
                TimerKind::Cron(id) => {
                    if let Some(signal) = self.cron_fired(&id) {
                        self.stats.timers_fired += 1;
                        self.step_signal("cron", signal, false);
                    }
                }
                TimerKind::Tick => {
                    self.tick = None;
                    self.stats.ticks += 1;
                    let span = tracing::info_span!("tick", agent = self.name(), id = self.id());
                    let _entered = span.enter();
                    let scope = self.journal.as_mut().map(|journal| journal.begin());
                    let directives = self.guarded("tick", |agent| agent.tick());
                    drop(scope);
                    if let Some(journal) = &mut self.journal {
                        journal.record(Input::Tick, &*self.agent);
                    }
                    self.observe(|| Cause::Tick, &directives);
                    self.execute(directives);
                    self.after_step();
                }
            }
        }
    }

    pub(super) async fn on_control(&mut self, control: Control) {
        match control {
            Control::Inspect(inspect) => {
                let agent = &*self.agent;
                if catch_unwind(AssertUnwindSafe(|| inspect(agent))).is_err() {
                    tracing::error!(
                        agent = self.name(),
                        id = self.id(),
                        "an inspection panicked"
                    );
                }
            }
            Control::AwaitCompletion(reply) => {
                if self.after_step().is_done() {
                    let _ = reply.send(Ok(self.snapshot()));
                } else {
                    // Callers that gave up leave closed senders behind; drop them here.
                    self.waiters.retain(|w| !w.is_closed());
                    self.waiters.push(reply);
                }
            }
            Control::Stop { reason, reply } => {
                self.request_stop(reason);
                self.stop_replies.extend(reply);
            }
            Control::Checkpoint { then_stop, reply } => self.checkpoint(then_stop, reply).await,
            Control::Child { tag, reply } => {
                let child = self
                    .children
                    .get(&tag)
                    .filter(|c| !c.stopping)
                    .map(|c| c.handle.clone());
                let _ = reply.send(child);
            }
            Control::Children(reply) => {
                let mut children: Vec<_> = self
                    .children
                    .iter()
                    .filter(|(_, c)| !c.stopping)
                    .map(|(tag, c)| (tag.clone(), c.handle.clone()))
                    .collect();
                children.sort_by(|a, b| a.0.cmp(&b.0));
                let _ = reply.send(children);
            }
        }
    }

    pub(super) fn on_internal(&mut self, internal: Internal) {
        match internal {
            Internal::Completed(completion) => {
                let Some(pos) = self
                    .in_flight
                    .iter()
                    .position(|f| f.instruction.id == completion.id)
                else {
                    return;
                };
                let started = self.in_flight.remove(pos);
                // A tool's completion is part of its AI request: under its `invoke_agent` span.
                let parent = crate::ai::tool_call_request(&completion.id)
                    .and_then(|request| self.ai_requests.get(request))
                    .and_then(tracing::Span::id)
                    .or_else(|| tracing::Span::current().id());
                let span = tracing::info_span!(
                    parent: parent,
                    "completion",
                    agent = self.name(),
                    id = self.id(),
                    instruction = %completion.id,
                    action = %completion.action,
                    traceparent = tracing::field::Empty,
                );
                let _entered = span.enter();
                // The completion continues the trace of the signal that started the action:
                // what it emits carries that `traceparent`.
                self.trace_context = started.trace_context;
                if let Some(context) = &self.trace_context {
                    span.record("traceparent", context.traceparent());
                }
                let action = self.watched().then(|| completion.action.clone());
                let input = self
                    .journal
                    .is_some()
                    .then(|| Input::completion(&completion));
                let scope = self.journal.as_mut().map(|journal| journal.begin());
                let directives = self.guarded("cmd", |agent| agent.cmd(vec![completion]));
                drop(scope);
                if let (Some(journal), Some(input)) = (&mut self.journal, input) {
                    journal.record(input, &*self.agent);
                }
                self.observe(
                    || Cause::Completion {
                        action: action.unwrap_or_default(),
                    },
                    &directives,
                );
                self.execute(directives);
                self.trace_context = None;
                self.after_step();
            }
            Internal::Embed {
                reply,
                request_id,
                trace_context,
            } => {
                let mut signal = reply.into_signal().with_source(self.source());
                // The answer steps the agent in the trace of the step that asked for it.
                if let Some(context) = &trace_context {
                    context.apply_to(&mut signal);
                }
                self.step_in_request("embed", &request_id, signal, None);
            }
            Internal::ChildExit { tag, report } => {
                if self
                    .children
                    .get(&tag)
                    .is_some_and(|c| c.handle.id() == report.id)
                {
                    self.children.remove(&tag);
                }
                let signal = Signal::new(
                    CHILD_EXIT_SIGNAL,
                    json!({
                        "tag": tag,
                        "id": report.id,
                        "agent": report.agent,
                        "reason": report.reason,
                        "message": report.reason.to_string(),
                    }),
                )
                .with_source(self.source());
                if self
                    .router
                    .get()
                    .matches(CHILD_EXIT_SIGNAL)
                    .next()
                    .is_some()
                {
                    self.step_signal("child", signal, false);
                } else {
                    tracing::debug!(
                        agent = self.name(),
                        id = self.id(),
                        tag,
                        "child exited (no route for its exit)"
                    );
                }
            }
        }
    }

    /// The agent and everything pending, as a checkpoint.
    pub(super) fn build_checkpoint(&self) -> Result<Checkpoint, CheckpointError> {
        let agent = &*self.agent;
        let value = match catch_unwind(AssertUnwindSafe(|| agent.to_json())) {
            Ok(Ok(value)) => value,
            Ok(Err(e)) => {
                return Err(CheckpointError::Serialize {
                    detail: e.to_string(),
                });
            }
            Err(payload) => {
                return Err(CheckpointError::Serialize {
                    detail: ActionError::panicked("serialize", payload.as_ref())
                        .message()
                        .to_string(),
                });
            }
        };
        Ok(Checkpoint {
            agent: value,
            timers: self.pending_timers(),
            cron: self
                .crons
                .iter()
                .map(|(id, job)| CronEntry {
                    id: id.clone(),
                    expression: job.expression.clone(),
                    signal: job.signal.clone(),
                })
                .collect(),
            in_flight: self
                .in_flight
                .iter()
                .map(|f| PendingInstruction {
                    instruction: f.instruction.clone(),
                    exec: f.exec,
                })
                .collect(),
            llm_calls: self.llm_calls.iter().map(|c| c.call.clone()).collect(),
            saved_at: clock::now(),
        })
    }

    pub(super) fn pending_timers(&self) -> Vec<PendingTimer> {
        self.timers
            .iter()
            .filter_map(|(at, kind)| match kind {
                TimerKind::Signal(signal) => Some(PendingTimer {
                    due_at: clock::to_wall(at),
                    signal: signal.clone(),
                }),
                TimerKind::Cron(_) | TimerKind::Tick => None,
            })
            .collect()
    }

    /// With `Options::checkpoint_store`: writes the agent's checkpoint if it raised or
    /// answered an interrupt since the last write, then sends the interrupt signals that
    /// waited for it. Nothing else runs meanwhile, so what is on disk is what was announced.
    pub(super) async fn park(&mut self) {
        if self.parked.is_empty() && !self.park_due {
            return;
        }
        self.park_due = false;
        let parked = std::mem::take(&mut self.parked);
        if let Some(store) = self.options.checkpoint_store.clone() {
            // The journal's steps up to here are durable before the interrupt is announced,
            // as the checkpoint is: a crash while it waits cannot take them from the journal.
            if let Some(journal) = &mut self.journal {
                journal.sync().await;
            }
            let written = match self.build_checkpoint().and_then(|c| c.encode()) {
                Ok(bytes) => store
                    .save(self.id(), &bytes)
                    .await
                    .map_err(|e| e.to_string()),
                Err(error) => Err(error.to_string()),
            };
            if let Err(message) = written {
                self.on_error(
                    crate::error::AgentError::Directive {
                        directive: "interrupt".to_string(),
                        message: format!("the agent's checkpoint was not written: {message}"),
                    },
                    crate::error::ErrorContext::Directive {
                        directive: "interrupt".to_string(),
                    },
                );
            }
        }
        self.execute(parked.into_iter().map(crate::Directive::Emit).collect());
    }

    /// Hands a checkpoint to the caller and waits, processing nothing, until the caller says
    /// whether the store took it; the agent therefore cannot move on from what was saved.
    async fn checkpoint(&mut self, then_stop: bool, reply: CheckpointReply) {
        let span =
            tracing::info_span!("checkpoint", agent = self.name(), id = self.id(), then_stop);
        let built = span.in_scope(|| self.build_checkpoint().and_then(|c| c.encode()));
        let bytes = match built {
            Ok(bytes) => bytes,
            Err(error) => {
                let _ = reply.send(Err(error));
                return;
            }
        };
        let (decide, decision) = oneshot::channel();
        if reply.send(Ok((bytes, decide))).is_err() {
            return;
        }
        // A caller that went away before deciding counts as "not saved".
        let saved = decision.await.unwrap_or(false);
        if saved && then_stop {
            self.request_stop(StopReason::Hibernated);
        }
    }
}
