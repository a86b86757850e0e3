//! Graceful shutdown: drain what is queued, cancel what runs, stop the children, report.

use std::sync::atomic::Ordering;

use futures::future::join_all;
use tokio::sync::mpsc::UnboundedReceiver;
use tracing::Instrument;

use crate::error::ActionError;

use super::core::Core;
use super::error::ServerError;
use super::message::{Control, Internal, Message};
use super::report::{ChildReport, StopReason, StopReport};

impl Core {
    /// Ends the agent: nothing new gets in, what was queued behind the stop is answered (signals
    /// refused and counted, requests answered), async actions are cancelled and listed, children
    /// are stopped and their reports collected, and the report is published.
    pub(super) async fn shutdown(mut self, mut rx: UnboundedReceiver<Message>) {
        let reason = self.stop.take().unwrap_or(StopReason::Requested);
        let span = tracing::info_span!("shutdown", agent = self.name(), id = self.id(), %reason);
        let (mut report, late_children) = span.in_scope(|| self.drain(&mut rx, &reason));
        let mut children: Vec<_> = self.children.drain().collect();
        children.sort_by(|a, b| a.0.cmp(&b.0));
        report.children = join_all(children.into_iter().map(|(tag, child)| async move {
            let report = child.handle.stop_with(StopReason::StoppedByParent).await;
            ChildReport { tag, report }
        }))
        .instrument(span.clone())
        .await;
        report.children.extend(late_children);
        // Everything journaled is stored before anyone learns that the agent stopped.
        if let Some(journal) = &mut self.journal {
            journal.finish().instrument(span.clone()).await;
        }
        span.in_scope(|| self.finish(report, &reason));
    }

    /// Answers what was queued behind the stop and cancels running async actions.
    fn drain(
        &mut self,
        rx: &mut UnboundedReceiver<Message>,
        reason: &StopReason,
    ) -> (StopReport, Vec<ChildReport>) {
        rx.close();
        let mut report = StopReport::new(self.name(), self.id(), reason.clone());
        let mut late_children = Vec::new();
        while let Ok(message) = rx.try_recv() {
            match message {
                Message::Signal(envelope) => {
                    self.shared.queued.fetch_sub(1, Ordering::Relaxed);
                    report.unprocessed += 1;
                    if let Some(reply) = envelope.reply {
                        let _ = reply.send(Err(self.shared.stopped()));
                    }
                }
                Message::Control(control) => match *control {
                    Control::Inspect(inspect) => {
                        let agent = &*self.agent;
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            inspect(agent)
                        }));
                    }
                    Control::AwaitCompletion(reply) => self.waiters.push(reply),
                    Control::Stop { reply, .. } => self.stop_replies.extend(reply),
                    Control::Checkpoint { reply, .. } => {
                        let _ = reply.send(Err(crate::store::CheckpointError::Serialize {
                            detail: format!("the agent is stopping ({reason})"),
                        }));
                    }
                    Control::Child { reply, .. } => {
                        let _ = reply.send(None);
                    }
                    Control::Children(reply) => {
                        let _ = reply.send(Vec::new());
                    }
                },
                Message::Internal(internal) => match *internal {
                    // Cancelled work that finished anyway: its outcome is dropped, and it is
                    // still listed as in flight (a checkpoint taken before runs it again).
                    Internal::Completed(_) | Internal::Embed { .. } => {}
                    Internal::ChildExit { tag, report: child } => {
                        if self
                            .children
                            .get(&tag)
                            .is_some_and(|c| c.handle.id() == child.id)
                        {
                            self.children.remove(&tag);
                        }
                        late_children.push(ChildReport { tag, report: child });
                    }
                },
            }
        }
        for in_flight in self.in_flight.drain(..) {
            in_flight.abort.abort();
            report.in_flight.push(in_flight.instruction.id);
        }
        for call in self.llm_calls.drain(..) {
            call.abort.abort();
            report.in_flight.push(call.call.call_id);
        }
        (report, late_children)
    }

    /// Fills in the report, answers everyone waiting, tells the parent, publishes the report.
    fn finish(&mut self, mut report: StopReport, reason: &StopReason) {
        report.pending_timers = self.pending_timers();
        report.cron_jobs = self.crons.keys().cloned().collect();
        report.processed = self.stats.processed;
        report.timers_fired = self.stats.timers_fired;
        report.ticks = self.stats.ticks;
        report.errors = self.stats.errors;
        report.skipped_directives = self.stats.skipped_directives;
        let snapshot = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.agent.snapshot()
        })) {
            Ok(snapshot) => Some(snapshot),
            Err(payload) => {
                let panic = ActionError::panicked("snapshot", payload.as_ref());
                tracing::error!(
                    agent = self.name(),
                    id = self.id(),
                    error = panic.message(),
                    "final snapshot panicked"
                );
                None
            }
        };
        report.snapshot = snapshot.clone();
        for waiter in self.waiters.drain(..) {
            let answer = match &snapshot {
                Some(s) if s.done() => Ok(s.clone()),
                _ => Err(ServerError::StoppedBeforeCompletion {
                    agent: self.shared.name,
                    id: self.shared.id.to_string(),
                    reason: Box::new(reason.clone()),
                    snapshot: snapshot.clone().map(Box::new),
                }),
            };
            let _ = waiter.send(answer);
        }
        if let Some(parent) = &self.parent {
            parent.notify_exit(report.clone());
        }
        tracing::info!(
            agent = self.name(),
            id = self.id(),
            processed = report.processed,
            unprocessed = report.unprocessed,
            "agent stopped"
        );
        let _ = self.shared.exit.set(report.clone());
        self.shared.exited.notify_waiters();
        for reply in self.stop_replies.drain(..) {
            let _ = reply.send(report.clone());
        }
    }
}
