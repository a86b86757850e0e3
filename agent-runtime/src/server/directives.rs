//! Executing directives, in order, and the error policy.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use serde_json::json;
use tokio::time::Instant;
use tracing::Instrument;

use crate::ai::semconv;
use crate::directive::{ChildAgent, CustomDirective, Directive};
use crate::error::{ActionError, AgentError, ErrorContext};
use crate::instruction::{ExecOptions, Instruction};
use crate::signal::Signal;
use crate::trace;

use super::children::{Child, ParentLink};
use super::clock;
use super::core::{Core, InFlight, spawn};
use super::cron::CronJob;
use super::executor::ExecutorContext;
use super::message::{Internal, Message};
use super::options::ErrorPolicy;
use super::report::StopReason;
use super::timers::TimerKind;
use super::transport::Origin;

/// The `Error` directive for a directive the host could not execute (boxed: it travels in
/// `Result`s).
fn failed(kind: &str, message: impl Into<String>) -> Box<Directive> {
    Box::new(Directive::error(
        AgentError::Directive {
            directive: kind.to_string(),
            message: message.into(),
        },
        ErrorContext::Directive {
            directive: kind.to_string(),
        },
    ))
}

impl Core {
    /// Executes directives in order. A directive that fails is followed by its `Error`
    /// directive; directives after a stop (a `Stop`, or the error policy stopping the agent)
    /// are skipped and counted.
    pub(super) fn execute(&mut self, directives: Vec<Directive>) {
        if directives.is_empty() {
            return;
        }
        let mut queue = VecDeque::from(directives);
        while let Some(directive) = queue.pop_front() {
            if self.stop.is_some() {
                let skipped = 1 + queue.len() as u64;
                self.stats.skipped_directives += skipped;
                tracing::debug!(
                    agent = self.name(),
                    id = self.id(),
                    skipped,
                    "directives after a stop are not executed"
                );
                return;
            }
            if trace::on!(DEBUG) {
                trace::directive(self.name(), self.id(), directive.kind());
            }
            let span = tracing::debug_span!("directive", kind = directive.kind());
            let _entered = span.enter();
            if let Err(error) = self.execute_one(directive, &mut queue) {
                queue.push_front(*error);
            }
        }
    }

    /// Executes one directive; a failure is the `Error` directive to run next.
    fn execute_one(
        &mut self,
        directive: Directive,
        queue: &mut VecDeque<Directive>,
    ) -> Result<(), Box<Directive>> {
        match directive {
            Directive::Emit(mut signal) => {
                if let Some(context) = &self.trace_context {
                    context.apply_to(&mut signal);
                }
                if trace::on!(DEBUG) {
                    trace::signal_emitted(self.name(), self.id(), &signal);
                }
                self.stop_llm_calls_of_ended_request(&signal);
                self.track_request_span(&signal);
                self.publish(&signal)
            }
            Directive::Interrupt(mut signal) if self.options.checkpoint_store.is_some() => {
                // Goes out once the checkpoint holding the interrupt is written (`park`), in
                // the trace of the step that raised it.
                if let Some(context) = &self.trace_context {
                    context.apply_to(&mut signal);
                }
                self.parked.push(signal);
                Ok(())
            }
            Directive::Interrupt(signal) => {
                queue.push_front(Directive::Emit(signal));
                Ok(())
            }
            Directive::Error { error, context } => {
                self.on_error(error, context);
                Ok(())
            }
            Directive::Schedule { delay, mut signal } => {
                // The timer fires in the trace of the step that set it (kept in checkpoints
                // with the signal). A cron job's firings each start their own trace.
                if let Some(context) = &self.trace_context {
                    context.apply_to(&mut signal);
                }
                self.schedule(delay, signal);
                Ok(())
            }
            Directive::SpawnAgent { tag, agent } => self.spawn_child(tag, &agent),
            Directive::StopChild { tag } => self.stop_child(&tag),
            Directive::RunInstruction { instruction, exec } => {
                self.run_instruction(instruction, exec)
            }
            Directive::CancelInstruction { id } => {
                self.cancel_instruction(&id);
                Ok(())
            }
            Directive::Stop { reason } => {
                self.request_stop(StopReason::Directive { reason });
                Ok(())
            }
            Directive::Cron {
                id,
                expression,
                signal,
            } => self.add_cron(id, &expression, signal),
            Directive::CronCancel { id } => {
                self.cancel_cron(&id);
                Ok(())
            }
            Directive::Llm(call) => self.run_llm(*call),
            Directive::Embed(call) => self.run_embed(*call),
            Directive::Custom(custom) => {
                let directives = self.run_executor(&custom)?;
                // What the executor returned runs in its place, before what followed it.
                for directive in directives.into_iter().rev() {
                    queue.push_front(directive);
                }
                Ok(())
            }
        }
    }

    /// Sends a signal to subscribers, the parent and the transports.
    pub(super) fn publish(&mut self, signal: &Signal) -> Result<(), Box<Directive>> {
        // Nothing that breaks a CloudEvents rule leaves the agent.
        if let Err(error) = signal.validate() {
            return Err(failed(
                "emit",
                format!("the signal was not published: {error}"),
            ));
        }
        if let Some(events) = self.shared.events.get() {
            // No receiver left is not an error: nobody is watching.
            let _ = events.send(signal.clone());
        }
        let mut problems = Vec::new();
        if let Some(parent) = &self.parent
            && let Err(error) = parent.deliver(signal.clone())
        {
            problems.push(format!(
                "cannot deliver `{}` to the parent: {error}",
                signal.signal_type
            ));
        }
        let origin = Origin {
            agent: self.shared.name,
            id: &self.shared.id,
        };
        for transport in &self.options.transports {
            match catch_unwind(AssertUnwindSafe(|| transport.publish(&origin, signal))) {
                Ok(Ok(())) => {}
                Ok(Err(error)) => problems.push(format!(
                    "transport `{}` cannot publish `{}`: {error}",
                    transport.name(),
                    signal.signal_type
                )),
                Err(payload) => problems.push(format!(
                    "transport `{}` panicked publishing `{}`: {}",
                    transport.name(),
                    signal.signal_type,
                    ActionError::panicked("publish", payload.as_ref()).message()
                )),
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(failed("emit", problems.join("; ")))
        }
    }

    /// Applies the error policy to one error.
    pub(super) fn on_error(&mut self, error: AgentError, context: ErrorContext) {
        self.stats.errors += 1;
        let count = self.stats.errors;
        if self.errors_for_caller > 0 {
            // A `call` returns this error to its caller, whose to report it is.
            self.errors_for_caller -= 1;
            tracing::debug!(
                agent = self.name(),
                id = self.id(),
                error = %error,
                context = ?context,
                count,
                "agent error, returned to the caller"
            );
        } else {
            tracing::error!(
                agent = self.name(),
                id = self.id(),
                error = %error,
                context = ?context,
                count,
                "agent error"
            );
        }
        match self.options.error_policy.clone() {
            ErrorPolicy::LogOnly => {}
            ErrorPolicy::StopOnError => {
                self.request_stop(StopReason::Errors { count, last: error })
            }
            ErrorPolicy::StopAfter { errors } => {
                if count >= u64::from(errors) {
                    self.request_stop(StopReason::Errors { count, last: error });
                }
            }
            ErrorPolicy::EmitSignal { signal_type } => {
                let signal = Signal::new(
                    signal_type,
                    json!({
                        "agent": self.name(),
                        "id": self.id(),
                        "message": error.to_string(),
                        "error": error,
                        "context": context,
                    }),
                )
                .with_source(self.source());
                // Reporting an error must not raise another: a failure here is only logged.
                if let Err(failure) = self.publish(&signal)
                    && let Directive::Error { error, .. } = *failure
                {
                    tracing::error!(
                        agent = self.name(),
                        id = self.id(),
                        error = %error,
                        "the error signal could not be delivered everywhere"
                    );
                }
            }
        }
    }

    fn schedule(&mut self, delay: Duration, signal: Signal) {
        let at = Instant::now()
            .checked_add(delay)
            .unwrap_or_else(|| clock::to_instant(chrono::DateTime::<chrono::Utc>::MAX_UTC));
        self.timers.insert(at, TimerKind::Signal(signal));
    }

    fn spawn_child(&mut self, tag: String, child: &ChildAgent) -> Result<(), Box<Directive>> {
        if self.children.contains_key(&tag) {
            return Err(failed(
                "spawn_agent",
                format!(
                    "a child tagged `{tag}` is already running; stop it first (`StopChild`) or pick another tag"
                ),
            ));
        }
        let agent = catch_unwind(AssertUnwindSafe(|| child.instantiate())).map_err(|payload| {
            failed(
                "spawn_agent",
                format!(
                    "building child `{tag}` ({}) panicked: {}",
                    child.name(),
                    ActionError::panicked("instantiate", payload.as_ref()).message()
                ),
            )
        })?;
        let link = ParentLink::new(self.self_tx.clone(), self.shared.clone(), tag.clone());
        let (handle, _ready) = spawn(agent, self.options.clone(), Some(link), None, None)
            .map_err(|e| failed("spawn_agent", format!("child `{tag}`: {e}")))?;
        tracing::debug!(
            agent = self.name(),
            id = self.id(),
            tag,
            child = handle.id(),
            "child started"
        );
        self.children.insert(tag, Child::new(handle));
        Ok(())
    }

    fn stop_child(&mut self, tag: &str) -> Result<(), Box<Directive>> {
        match self.children.get_mut(tag) {
            Some(child) => {
                // It leaves the map when its exit arrives, reported as a signal.
                child.stopping = true;
                child.handle.request_stop(StopReason::StoppedByParent);
                Ok(())
            }
            None => {
                let mut running: Vec<&str> = self.children.keys().map(String::as_str).collect();
                running.sort_unstable();
                Err(failed(
                    "stop_child",
                    format!(
                        "no child is tagged `{tag}`; running children: {}",
                        if running.is_empty() {
                            "none".to_string()
                        } else {
                            running
                                .iter()
                                .map(|t| format!("`{t}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        }
                    ),
                ))
            }
        }
    }

    /// Starts an async action in its own task; its outcome comes back through the mailbox's
    /// internal lane and is fed to `cmd` as a completion.
    pub(super) fn run_instruction(
        &mut self,
        instruction: Instruction,
        exec: ExecOptions,
    ) -> Result<(), Box<Directive>> {
        if self
            .in_flight
            .iter()
            .any(|f| f.instruction.id == instruction.id)
        {
            return Err(failed(
                "run_instruction",
                format!(
                    "instruction `{}` is already running; give each instruction its own id",
                    instruction.id
                ),
            ));
        }
        let agent = &self.agent;
        let future = catch_unwind(AssertUnwindSafe(|| agent.execute(&instruction, exec))).map_err(
            |payload| {
                failed(
                    "run_instruction",
                    format!(
                        "starting `{}` panicked: {}",
                        instruction.action,
                        ActionError::panicked("execute", payload.as_ref()).message()
                    ),
                )
            },
        )?;
        let tx = self.self_tx.clone();
        let of = instruction.clone();
        // Who ran it, for the `action ran` event: copied only when it may be recorded.
        let traced = trace::on!(DEBUG).then(|| (self.name(), self.id().to_string()));
        // A model's call of an async tool runs in an `execute_tool` span, a child of its
        // request's `invoke_agent` span.
        let span = match crate::ai::tool_call_request(&instruction.id) {
            None => tracing::Span::none(),
            Some(request) => semconv::tool_span(
                self.ai_requests.get(request),
                &instruction.action,
                &instruction.id,
            ),
        };
        let task = tokio::spawn(
            async move {
                let started = Instant::now();
                // `execute` applies the exec policy and turns panics into failures.
                let outcome = future.await;
                if let Err(error) = &outcome {
                    semconv::record_tool_error(&tracing::Span::current(), error.kind());
                }
                if let Some((agent, id)) = &traced {
                    let error = outcome.as_ref().err();
                    trace::async_action_ran(agent, id, &of.action, started.elapsed(), error);
                }
                if let Some(tx) = tx.upgrade() {
                    let completion = Instruction::completed(&of, outcome);
                    let _ = tx.send(Message::internal(Internal::Completed(completion)));
                }
            }
            .instrument(span),
        );
        self.in_flight.push(InFlight {
            instruction,
            exec,
            abort: task.abort_handle(),
            trace_context: self.trace_context.clone(),
        });
        Ok(())
    }

    /// Aborts a running async instruction. Its completion, if it is already in the mailbox, is
    /// dropped on arrival: only instructions in `in_flight` are delivered. Idempotent.
    fn cancel_instruction(&mut self, id: &str) {
        if let Some(pos) = self.in_flight.iter().position(|f| f.instruction.id == id) {
            let cancelled = self.in_flight.remove(pos);
            cancelled.abort.abort();
            tracing::debug!(
                agent = self.name(),
                id = self.id(),
                instruction = id,
                action = %cancelled.instruction.action,
                "async instruction cancelled"
            );
        }
    }

    fn add_cron(
        &mut self,
        id: String,
        expression: &str,
        signal: Signal,
    ) -> Result<(), Box<Directive>> {
        let mut job =
            CronJob::new(expression, signal, clock::now()).map_err(|e| failed("cron", e))?;
        self.cancel_cron(&id);
        job.timer = Some(
            self.timers
                .insert(clock::to_instant(job.next), TimerKind::Cron(id.clone())),
        );
        self.crons.insert(id, job);
        Ok(())
    }

    /// Cancelling a job that does not exist is not an error: cancellation is idempotent.
    fn cancel_cron(&mut self, id: &str) {
        if let Some(job) = self.crons.remove(id)
            && let Some(key) = job.timer
        {
            self.timers.remove(key);
        }
    }

    /// Re-arms a cron job for its next occurrence and returns the signal to deliver now.
    pub(super) fn cron_fired(&mut self, id: &str) -> Option<Signal> {
        let job = self.crons.get_mut(id)?;
        job.timer = None;
        let signal = job.signal.clone();
        match job.advance(clock::now()) {
            Ok(next) => {
                job.timer = Some(
                    self.timers
                        .insert(clock::to_instant(next), TimerKind::Cron(id.to_string())),
                );
            }
            Err(message) => {
                self.crons.remove(id);
                self.execute(vec![*failed("cron", message)]);
            }
        }
        Some(signal)
    }

    fn run_executor(&mut self, custom: &CustomDirective) -> Result<Vec<Directive>, Box<Directive>> {
        let kind = custom.kind();
        let Some(executor) = self.options.executors.get(kind).cloned() else {
            let mut known: Vec<&str> = self.options.executors.keys().map(String::as_str).collect();
            known.sort_unstable();
            return Err(failed(
                kind,
                format!(
                    "no executor is registered for directive kind `{kind}` (registered: {}); register one with `Options::executor`",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ),
            ));
        };
        let context = ExecutorContext {
            shared: &self.shared,
            tx: &self.self_tx,
        };
        match catch_unwind(AssertUnwindSafe(|| executor(custom, &context))) {
            Ok(Ok(directives)) => Ok(directives),
            Ok(Err(error)) => Err(Box::new(Directive::error(
                error,
                ErrorContext::Directive {
                    directive: kind.to_string(),
                },
            ))),
            Err(payload) => Err(failed(
                kind,
                format!(
                    "its executor panicked: {}",
                    ActionError::panicked(kind, payload.as_ref()).message()
                ),
            )),
        }
    }
}
