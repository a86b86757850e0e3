//! The agent's task: one loop over its mailbox and its timers.

use std::collections::{BTreeMap, HashMap};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures::StreamExt;
use tokio::sync::mpsc::error::TryRecvError;
use tokio::sync::mpsc::{self, UnboundedReceiver, WeakUnboundedSender};
use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;

use crate::agent::DynAgent;
use crate::directive::Directive;
use crate::error::{ActionError, AgentError, ErrorContext};
use crate::instruction::{ExecOptions, Instruction};
use crate::journal::Input;
use crate::journal::recorder::Recorder;
use crate::route::Router;
use crate::signal::{Signal, TraceContext};
use crate::snapshot::{Snapshot, Status};
use crate::store::{Checkpoint, CronEntry, PendingInstruction, PendingTimer};

use super::children::{Child, ParentLink};
use super::clock;
use super::cron::CronJob;
use super::error::ServerError;
use super::handle::{AgentRef, CallOutcome, Shared};
use super::message::{Envelope, Message};
use super::observe::{Cause, Watching};
use super::options::Options;
use super::report::{StopReason, StopReport};
use super::timers::{TimerKey, TimerKind, Timers};

/// How many messages (or due timers) one wake-up handles before the other side gets a look.
pub(super) const BATCH: usize = 64;

/// The shortest tick interval: a zero interval would tick in a busy loop.
const MIN_TICK: Duration = Duration::from_millis(1);

/// A router shared by every agent of a type, or one built for this server (plugin routes).
pub(super) enum RouterRef {
    Static(&'static Router),
    Owned(Box<Router>),
}

impl RouterRef {
    pub(super) fn get(&self) -> &Router {
        match self {
            RouterRef::Static(router) => router,
            RouterRef::Owned(router) => router,
        }
    }
}

/// What a thawed agent gets back besides its state.
#[derive(Debug, Default)]
pub(crate) struct Restore {
    timers: Vec<PendingTimer>,
    cron: Vec<CronEntry>,
    in_flight: Vec<PendingInstruction>,
    llm_calls: Vec<crate::ai::LlmCall>,
}

impl From<Checkpoint> for Restore {
    fn from(checkpoint: Checkpoint) -> Self {
        Restore {
            timers: checkpoint.timers,
            cron: checkpoint.cron,
            in_flight: checkpoint.in_flight,
            llm_calls: checkpoint.llm_calls,
        }
    }
}

/// An async instruction the server is running.
pub(super) struct InFlight {
    pub(super) instruction: Instruction,
    pub(super) exec: ExecOptions,
    pub(super) abort: tokio::task::AbortHandle,
    /// The trace context of the step that started it: its completion continues that trace.
    pub(super) trace_context: Option<TraceContext>,
}

#[derive(Debug, Default)]
pub(super) struct Stats {
    pub(super) processed: u64,
    pub(super) timers_fired: u64,
    pub(super) ticks: u64,
    pub(super) errors: u64,
    pub(super) skipped_directives: u64,
}

/// Everything the agent's task owns.
pub(super) struct Core {
    pub(super) agent: Box<dyn DynAgent>,
    pub(super) shared: Arc<Shared>,
    pub(super) options: Arc<Options>,
    pub(super) router: RouterRef,
    pub(super) tick_interval: Duration,
    /// Weak, so that the agent stops when every outside handle is gone.
    pub(super) self_tx: WeakUnboundedSender<Message>,
    pub(super) parent: Option<ParentLink>,
    pub(super) timers: Timers,
    pub(super) tick: Option<TimerKey>,
    pub(super) crons: BTreeMap<String, CronJob>,
    pub(super) in_flight: Vec<InFlight>,
    pub(super) llm_calls: Vec<super::ai::LlmInFlight>,
    /// The model calls' futures, polled by the agent's task (`llm_calls` says which are live);
    /// made at the first call, so an agent that never calls a model does not carry it.
    pub(super) llm_tasks: Option<super::ai::LlmTasks>,
    /// The trace context of the signal being handled: the signals emitted while it is handled
    /// carry it on.
    pub(super) trace_context: Option<TraceContext>,
    /// The `invoke_agent` span of each AI request still running, by request id.
    pub(super) ai_requests: HashMap<String, tracing::Span>,
    pub(super) children: HashMap<String, Child>,
    pub(super) waiters: Vec<oneshot::Sender<Result<Snapshot, ServerError>>>,
    pub(super) stop_replies: Vec<oneshot::Sender<StopReport>>,
    pub(super) stats: Stats,
    pub(super) stop: Option<StopReason>,
    /// `Error` directives of the `cmd` a `call` is waiting for that are still to be executed:
    /// the caller gets them in its outcome, so they are logged at debug, not at error.
    pub(super) errors_for_caller: usize,
    /// Interrupt signals waiting for the agent's checkpoint to be written
    /// (`Options::checkpoint_store`) before they go out.
    pub(super) parked: Vec<Signal>,
    /// An interrupt was answered since the last park: the checkpoint must be written again.
    pub(super) park_due: bool,
    /// The input journal, when `Options::journal` is set (boxed: off costs one pointer).
    pub(super) journal: Option<Box<Recorder>>,
    /// The CloudEvents source of the signals the server creates for this agent, made once.
    pub(super) source: Arc<str>,
    /// The agent's side of its watchers.
    pub(super) watching: Watching,
}

/// Validates and starts an agent's task. Returns its handle and a receiver that fires once
/// `init` (and a restore) have run. `journal_end` is where the agent's stored journal ends,
/// when it is journaled (`None` inside: no journal yet).
pub(crate) fn spawn(
    agent: Box<dyn DynAgent>,
    options: Arc<Options>,
    parent: Option<ParentLink>,
    restore: Option<Restore>,
    journal_end: Option<Option<u64>>,
) -> Result<(AgentRef, oneshot::Receiver<()>), ServerError> {
    options
        .validate()
        .map_err(|message| ServerError::InvalidOptions { message })?;
    let name = agent.agent_name();
    super::ai::check_models(&*agent, &options)?;
    let problems = agent.tool_schema_problems();
    if !problems.is_empty() {
        return Err(ServerError::UnenforcedToolSchema {
            agent: name,
            problems: problems.join("; "),
        });
    }
    let own = agent.router().map_err(|error| ServerError::InvalidRoutes {
        agent: name,
        declared_in: "its routes",
        error: error.clone(),
    })?;
    let router = if options.plugin_routes.is_empty() {
        RouterRef::Static(own)
    } else {
        RouterRef::Owned(Box::new(own.extended(&options.plugin_routes).map_err(
            |error| ServerError::InvalidRoutes {
                agent: name,
                declared_in: "the plugin routes in `Options`",
                error,
            },
        )?))
    };
    let shared = Arc::new(Shared {
        name,
        id: agent.id().into(),
        capacity: options.mailbox_capacity,
        max_signal_bytes: options.max_signal_bytes,
        queued: Default::default(),
        call_timeout: options.call_timeout,
        event_capacity: options.event_capacity,
        events: OnceLock::new(),
        watchers: OnceLock::new(),
        every_step: Default::default(),
        exit: OnceLock::new(),
        exited: Notify::new(),
    });
    let (tx, rx) = mpsc::unbounded_channel();
    let journal = match (&options.journal, journal_end) {
        (Some(journal), Some(end)) => Some(Box::new(Recorder::start(journal, &*agent, end))),
        _ => None,
    };
    let core = Core {
        source: format!("/stratagem/agents/{name}/{}", agent.id()).into(),
        journal,
        watching: Watching::default(),
        tick_interval: agent
            .tick_interval()
            .unwrap_or(options.tick_interval)
            .max(MIN_TICK),
        agent,
        shared: shared.clone(),
        options,
        router,
        self_tx: tx.downgrade(),
        parent,
        timers: Timers::default(),
        tick: None,
        crons: BTreeMap::new(),
        in_flight: Vec::new(),
        llm_calls: Vec::new(),
        llm_tasks: Default::default(),
        ai_requests: HashMap::new(),
        trace_context: None,
        children: HashMap::new(),
        waiters: Vec::new(),
        stop_replies: Vec::new(),
        stats: Stats::default(),
        stop: None,
        errors_for_caller: 0,
        parked: Vec::new(),
        park_due: false,
    };
    let (ready_tx, ready) = oneshot::channel();
    tokio::spawn(run(core, rx, restore, ready_tx));
    Ok((AgentRef::new(tx, shared), ready))
}

/// Publishes a report if the task ends without one (its runtime shut down with the agent still
/// running, or a bug in the server itself), so nobody waits forever for the agent to stop.
struct ExitGuard(Arc<Shared>);

impl Drop for ExitGuard {
    fn drop(&mut self) {
        if self.0.exit.get().is_none() {
            let reason = StopReason::Crashed {
                message: "the agent's task ended without stopping: its tokio runtime shut down, or the server panicked".to_string(),
            };
            let _ = self
                .0
                .exit
                .set(StopReport::new(self.0.name, &self.0.id, reason));
            self.0.exited.notify_waiters();
        }
    }
}

async fn run(
    mut core: Core,
    mut rx: UnboundedReceiver<Message>,
    restore: Option<Restore>,
    ready: oneshot::Sender<()>,
) {
    let _guard = ExitGuard(core.shared.clone());
    core.start(restore);
    core.park().await;
    let _ = ready.send(());
    while core.stop.is_none() {
        tokio::select! {
            // Timers first, then a batch of the mailbox in the same wake-up: each side is
            // bounded, so a flood on one never starves the other.
            biased;
            () = core.timers.wait() => {
                core.fire_due_timers();
                core.park().await;
                core.drain_mailbox(&mut rx).await;
            }
            // Before the mailbox, so that a flood of signals cannot hold the answers back.
            Some(outcome) = next_llm_outcome(&mut core.llm_tasks),
                if core.llm_tasks.as_ref().is_some_and(|tasks| !tasks.is_empty()) => {
                if let Some(outcome) = outcome {
                    core.on_llm_reply(outcome);
                    core.park().await;
                }
                core.drain_mailbox(&mut rx).await;
            }
            message = rx.recv() => match message {
                Some(message) => {
                    core.dispatch(message).await;
                    core.drain_mailbox(&mut rx).await;
                }
                None => core.request_stop(StopReason::HandlesDropped),
            },
        }
        if let Some(journal) = &mut core.journal {
            journal.flush();
        }
        // Nothing left to do: a step held back from coalescing watchers goes out now.
        if rx.is_empty() {
            core.flush_observation();
        }
    }
    core.flush_observation();
    core.shutdown(rx).await;
}

/// The next model call to end, of those the agent's task polls.
async fn next_llm_outcome(
    tasks: &mut Option<super::ai::LlmTasks>,
) -> Option<Option<super::ai::LlmOutcome>> {
    match tasks {
        Some(tasks) => tasks.next().await,
        None => None,
    }
}

impl Core {
    pub(super) fn name(&self) -> &'static str {
        self.shared.name
    }

    pub(super) fn id(&self) -> &str {
        &self.shared.id
    }

    /// The CloudEvents source of signals the server creates for this agent.
    pub(super) fn source(&self) -> String {
        self.source.to_string()
    }

    pub(super) fn request_stop(&mut self, reason: StopReason) {
        if self.stop.is_none() {
            tracing::debug!(agent = self.name(), id = self.id(), %reason, "stopping");
            self.stop = Some(reason);
        }
    }

    /// Runs `init` and restores what a checkpoint carried.
    fn start(&mut self, restore: Option<Restore>) {
        let span = tracing::info_span!("init", agent = self.name(), id = self.id());
        let _entered = span.enter();
        let scope = self.journal.as_mut().map(|journal| journal.begin());
        let directives = self.guarded("init", |agent| agent.init());
        drop(scope);
        if let Some(journal) = &mut self.journal {
            journal.record(Input::Init, &*self.agent);
        }
        self.observe(|| Cause::Init, &directives);
        self.execute(directives);
        if let Some(restore) = restore {
            self.restore(restore);
        }
        self.after_step();
    }

    fn restore(&mut self, restore: Restore) {
        for timer in restore.timers {
            let at = clock::to_instant(timer.due_at);
            self.timers.insert(at, TimerKind::Signal(timer.signal));
        }
        let mut directives = Vec::new();
        for job in restore.cron {
            directives.push(Directive::Cron {
                id: job.id,
                expression: job.expression,
                signal: job.signal,
            });
        }
        for pending in restore.in_flight {
            directives.push(Directive::RunInstruction {
                instruction: pending.instruction,
                exec: pending.exec,
            });
        }
        // Model calls that were running are made again; the ones that had answered are not.
        for call in restore.llm_calls {
            directives.push(Directive::Llm(Box::new(call)));
        }
        self.execute(directives);
    }

    /// Calls the strategy with panics caught (see [`guarded`]).
    pub(super) fn guarded(
        &mut self,
        what: &'static str,
        call: impl FnOnce(&mut dyn DynAgent) -> Vec<Directive>,
    ) -> Vec<Directive> {
        guarded(
            &mut self.agent,
            self.options.isolate_strategy_panics,
            what,
            call,
        )
    }

    pub(super) fn snapshot(&mut self) -> Snapshot {
        match catch_unwind(AssertUnwindSafe(|| self.agent.snapshot())) {
            Ok(snapshot) => snapshot,
            Err(payload) => {
                let panic = ActionError::panicked("snapshot", payload.as_ref());
                let error = AgentError::Strategy {
                    message: format!(
                        "the strategy of agent `{}` panicked: {}; reported as `failure`",
                        self.name(),
                        panic.message()
                    ),
                };
                let snapshot = Snapshot::new(Status::Failure)
                    .with_details(serde_json::json!({ "error": error.to_string() }));
                self.on_error(error, ErrorContext::Strategy);
                snapshot
            }
        }
    }

    /// The agent's status without the snapshot's details (no JSON built); a panicking strategy
    /// is reported as [`snapshot`](Self::snapshot) reports it.
    fn status(&mut self) -> Status {
        match catch_unwind(AssertUnwindSafe(|| self.agent.status())) {
            Ok(status) => status,
            Err(_) => self.snapshot().status,
        }
    }

    /// After each step: arm or disarm the tick, answer completion waiters. Reads the status
    /// only: the full snapshot is built when a waiter gets it.
    pub(super) fn after_step(&mut self) -> Status {
        let status = self.status();
        let running = status == Status::Running;
        match (running && self.stop.is_none(), self.tick) {
            (true, None) => {
                let at = Instant::now() + self.tick_interval;
                self.tick = Some(self.timers.insert(at, TimerKind::Tick));
            }
            (false, Some(key)) => {
                self.timers.remove(key);
                self.tick = None;
            }
            _ => {}
        }
        if status.is_done() && !self.waiters.is_empty() {
            let snapshot = self.snapshot();
            // Copies for all but the last waiter, which takes the snapshot itself.
            let last = self.waiters.pop();
            for waiter in self.waiters.drain(..) {
                let _ = waiter.send(Ok(snapshot.clone()));
            }
            if let Some(waiter) = last {
                let _ = waiter.send(Ok(snapshot));
            }
        }
        status
    }

    /// Handles up to a batch of what is already in the mailbox, without waiting.
    async fn drain_mailbox(&mut self, rx: &mut UnboundedReceiver<Message>) {
        for _ in 0..BATCH {
            if self.stop.is_some() {
                return;
            }
            match rx.try_recv() {
                Ok(message) => self.dispatch(message).await,
                Err(TryRecvError::Empty) => return,
                Err(TryRecvError::Disconnected) => {
                    self.request_stop(StopReason::HandlesDropped);
                    return;
                }
            }
        }
    }

    async fn dispatch(&mut self, message: Message) {
        match message {
            Message::Signal(envelope) => {
                self.shared.queued.fetch_sub(1, Ordering::Relaxed);
                let Envelope { signal, reply } = *envelope;
                self.stats.processed += 1;
                if signal.signal_type == crate::interrupt::RESUME_SIGNAL {
                    self.park_due = true;
                }
                let outcome = self.step_signal("signal", signal, reply.is_some());
                // A caller hears of the step once its interrupts are on disk.
                self.park().await;
                if let Some(reply) = reply {
                    let _ = reply.send(Ok(outcome.expect("a reply asks for the outcome")));
                }
            }
            Message::Control(control) => self.on_control(*control).await,
            Message::Internal(internal) => {
                self.on_internal(*internal);
                self.park().await;
            }
        }
    }

    /// Routes a signal, runs the matching targets as one `cmd` (and `tick`, when a route
    /// targets it), executes the directives. Returns the outcome when `record` is set (a `call`
    /// is waiting for it).
    pub(super) fn step_signal(
        &mut self,
        origin: &'static str,
        signal: Signal,
        record: bool,
    ) -> Option<CallOutcome> {
        self.step_payload(origin, signal, None, record)
    }

    /// [`step_signal`](Core::step_signal) of a signal whose payload is `reply` when given (a
    /// model's answer, kept typed: its JSON is built only for a reader of the signal, the
    /// journal or a watcher, or an agent that cannot take it typed).
    pub(super) fn step_payload(
        &mut self,
        origin: &'static str,
        mut signal: Signal,
        reply: Option<crate::ai::LlmReply>,
        record: bool,
    ) -> Option<CallOutcome> {
        let span = tracing::info_span!(
            "signal",
            agent = self.name(),
            id = self.id(),
            origin,
            signal_type = %signal.signal_type,
            signal_id = %signal.id,
            traceparent = tracing::field::Empty,
        );
        let incoming = TraceContext::of(&signal);
        if let Some(context) = &incoming {
            span.record("traceparent", context.traceparent());
        }
        // A signal from outside or a timer's is joined to its remote parent; an answer to this
        // server's own work (a model's, a child's) already hangs under its local parent.
        self.trace_context = match &self.options.trace_link {
            Some(link) if matches!(origin, "signal" | "timer") => {
                if let Some(context) = &incoming {
                    link.continue_trace(&span, context);
                }
                link.outgoing(&span, incoming.as_ref())
            }
            _ => incoming,
        };
        let _entered = span.enter();
        let router = self.router.get();
        let scope = self.journal.as_mut().map(|journal| journal.begin());
        let isolate = self.options.isolate_strategy_panics;
        // Only the journal and the watchers read the signal after the step: without them its
        // data moves into the instructions instead of being copied. (A watcher subscribing
        // during this step sees the agent from the next one.)
        if self.journal.is_none() && self.shared.watchers.get().is_none() {
            let unheard = self.unheard(record);
            if unheard {
                self.agent.set_unheard(true);
            }
            let directives = guarded(&mut self.agent, isolate, "cmd", |agent| match reply {
                Some(reply) => agent.handle_llm_reply_with(router, signal, reply),
                None => agent.handle_owned_signal_with(router, signal),
            });
            // Withdrawn whether a machine took it or not (a step that reached no AI machine).
            if unheard {
                self.agent.set_unheard(false);
            }
            drop(scope);
            return self.after_signal_step(record, directives);
        }
        if let Some(reply) = reply {
            signal.data = reply.to_json();
        }
        let directives = guarded(&mut self.agent, isolate, "cmd", |agent| {
            agent.handle_signal_with(router, &signal)
        });
        drop(scope);
        if let Some(journal) = &mut self.journal {
            journal.record_signal(origin, &signal, &*self.agent);
        }
        self.observe(|| Cause::Signal { origin, signal }, &directives);
        self.after_signal_step(record, directives)
    }

    /// Whether nobody can hear the informational AI events of a step without journal and
    /// watchers (`DynAgent::set_unheard`): no caller waits for its directives (`record`), no
    /// subscriber, parent or transport gets what it publishes, no debug trace lists it.
    fn unheard(&self, record: bool) -> bool {
        !record
            && self.parent.is_none()
            && self.options.transports.is_empty()
            && self
                .shared
                .events
                .get()
                .is_none_or(|events| events.receiver_count() == 0)
            && !crate::trace::on!(DEBUG)
    }

    /// Executes a signal step's directives; the outcome when `record` is set.
    fn after_signal_step(
        &mut self,
        record: bool,
        directives: Vec<Directive>,
    ) -> Option<CallOutcome> {
        let recorded = record.then(|| directives.clone());
        if record {
            self.errors_for_caller = directives
                .iter()
                .filter(|d| matches!(d, Directive::Error { .. }))
                .count();
        }
        self.execute(directives);
        self.errors_for_caller = 0;
        self.trace_context = None;
        self.after_step();
        recorded.map(|directives| CallOutcome {
            directives,
            snapshot: self.snapshot(),
        })
    }
}

/// Calls the strategy with panics caught. With isolation on, a copy taken before the call
/// replaces the agent if it panics, so a panic changes nothing; the panic becomes an `Error`
/// directive either way.
fn guarded(
    agent: &mut Box<dyn DynAgent>,
    isolate: bool,
    what: &'static str,
    call: impl FnOnce(&mut dyn DynAgent) -> Vec<Directive>,
) -> Vec<Directive> {
    let backup = isolate.then(|| agent.clone_box());
    let run = AssertUnwindSafe(|| call(&mut **agent));
    // With the server's copy the agent takes none of its own (one copy per call).
    let result = if isolate {
        catch_unwind(|| crate::isolation::with_host_copy(run))
    } else {
        catch_unwind(run)
    };
    match result {
        Ok(directives) => directives,
        Err(payload) => {
            let payload = match payload.downcast::<crate::isolation::StrategyPanic>() {
                // The strategy's own panic, typed by the agent: reported as `cmd` would.
                Ok(typed) => {
                    if let Some(backup) = backup {
                        *agent = backup;
                    }
                    return vec![Directive::error(typed.0, ErrorContext::Strategy)];
                }
                Err(payload) => payload,
            };
            let panic = ActionError::panicked(what, payload.as_ref());
            let effect = match backup {
                Some(backup) => {
                    *agent = backup;
                    "the agent was restored to its state before the call"
                }
                None => "the agent may be half-updated (`Options::isolate_strategy_panics` is off)",
            };
            vec![Directive::error(
                AgentError::Strategy {
                    message: format!(
                        "the strategy of agent `{}` panicked: {}; {effect}",
                        agent.agent_name(),
                        panic.message()
                    ),
                },
                ErrorContext::Strategy,
            )]
        }
    }
}
