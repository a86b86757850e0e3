//! Handles to running agents: [`AgentRef`] for any agent, [`AgentServer<S>`] typed.

use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures::Stream;
use serde::Serialize;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::{Notify, broadcast, oneshot};

use crate::agent::{Agent, AgentSpec, DynAgent};
use crate::directive::Directive;
use crate::error::AgentError;
use crate::inspect::{Progress, Shape};
use crate::signal::Signal;
use crate::snapshot::Snapshot;
use crate::store::{Checkpoint, CheckpointError, Store};

use super::core::{Restore, spawn};
use super::error::ServerError;
use super::message::{Control, Envelope, Message};
use super::observe::Observation;
use super::options::Options;
use super::report::{StopReason, StopReport};

/// What a handle and its agent's task share.
pub(crate) struct Shared {
    pub(crate) name: &'static str,
    pub(crate) id: Box<str>,
    pub(crate) capacity: usize,
    pub(crate) max_signal_bytes: usize,
    /// Signals in the mailbox not yet taken by the agent.
    pub(crate) queued: AtomicUsize,
    pub(crate) call_timeout: Duration,
    pub(crate) event_capacity: usize,
    /// Created by the first subscriber, so idle agents nobody watches carry no buffer.
    pub(crate) events: OnceLock<broadcast::Sender<Signal>>,
    /// Created by the first watcher ([`AgentRef::watch`]), like `events`.
    pub(crate) watchers: OnceLock<broadcast::Sender<Arc<Observation>>>,
    /// Set by the first [`AgentRef::watch`]: a watcher was promised every step, so none is
    /// coalesced ([`AgentRef::watch_coalesced`]).
    pub(crate) every_step: AtomicBool,
    pub(crate) exit: OnceLock<StopReport>,
    pub(crate) exited: Notify,
}

impl Shared {
    pub(crate) fn stopped(&self) -> ServerError {
        ServerError::Stopped {
            agent: self.name,
            id: self.id.to_string(),
        }
    }

    /// Queues a signal unless it breaks a CloudEvents rule, is too large or finds the mailbox
    /// full; the one place all three are enforced.
    pub(crate) fn deliver(
        &self,
        tx: &UnboundedSender<Message>,
        envelope: Envelope,
    ) -> Result<(), ServerError> {
        if let Err(error) = envelope.signal.validate() {
            return Err(ServerError::InvalidSignal {
                agent: self.name,
                id: self.id.to_string(),
                error,
            });
        }
        let signal = &envelope.signal;
        if signal_size_exceeds(signal, self.max_signal_bytes) {
            return Err(ServerError::SignalTooLarge {
                agent: self.name,
                id: self.id.to_string(),
                signal_type: crate::quote::Quoted::new(&signal.signal_type).to_string(),
                limit: self.max_signal_bytes,
            });
        }
        // One atomic counter bounds the mailbox exactly: a slot is taken before the send and
        // given back when the send fails or the agent takes the signal out.
        if self.queued.fetch_add(1, Ordering::Relaxed) >= self.capacity {
            self.queued.fetch_sub(1, Ordering::Relaxed);
            return Err(ServerError::MailboxFull {
                agent: self.name,
                id: self.id.to_string(),
                capacity: self.capacity,
            });
        }
        if tx.send(Message::Signal(Box::new(envelope))).is_err() {
            self.queued.fetch_sub(1, Ordering::Relaxed);
            return Err(self.stopped());
        }
        Ok(())
    }

    pub(crate) async fn wait_exit(&self) -> StopReport {
        loop {
            let notified = self.exited.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(report) = self.exit.get() {
                return report.clone();
            }
            notified.await;
        }
    }
}

/// Whether the signal, as compact JSON (CloudEvents' structured mode), takes more than
/// `limit` bytes.
/// Serializing stops as soon as the count passes the limit, so a huge signal costs no more
/// than the limit to refuse.
fn signal_size_exceeds(signal: &Signal, limit: usize) -> bool {
    // Nearly every signal is far below the limit: a bound counted without writing anything
    // settles it; only one that might exceed the limit is written out to count its bytes.
    if signal.json_size_bound() <= limit {
        return false;
    }
    struct Budget(usize);
    impl std::io::Write for Budget {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 = self
                .0
                .checked_sub(buf.len())
                .ok_or_else(|| std::io::Error::other("over the limit"))?;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    serde_json::to_writer(&mut Budget(limit), signal).is_err()
}

/// What a `call` produced: the directives of the signal's `cmd` (in the order they were
/// executed) and the agent's snapshot once they had been.
///
/// Failures of the host while executing those directives (a full parent mailbox, an unknown
/// child) are not in this list: they go to the error policy.
#[derive(Debug, Clone, Serialize)]
pub struct CallOutcome {
    /// What the strategy returned for the signal.
    pub directives: Vec<Directive>,
    /// Where the agent stands afterwards.
    pub snapshot: Snapshot,
}

impl CallOutcome {
    /// The errors among the directives (a failed action, an unmatched signal, ...).
    pub fn errors(&self) -> impl Iterator<Item = &AgentError> {
        self.directives.iter().filter_map(Directive::as_error)
    }

    /// The signals the directives emitted.
    pub fn emitted(&self) -> impl Iterator<Item = &Signal> {
        self.directives.iter().filter_map(|d| match d {
            Directive::Emit(signal) | Directive::Interrupt(signal) => Some(signal),
            _ => None,
        })
    }
}

/// A handle to a running agent of any type: cheap to clone, usable from any task.
///
/// The agent runs in its own tokio task until it is stopped: by [`stop`](AgentRef::stop), by a
/// `Stop` directive, by its error policy, by [`AgentServer::hibernate`], by its parent, or when
/// every handle to it is dropped.
#[derive(Clone)]
pub struct AgentRef {
    tx: UnboundedSender<Message>,
    shared: Arc<Shared>,
}

impl AgentRef {
    pub(crate) fn new(tx: UnboundedSender<Message>, shared: Arc<Shared>) -> Self {
        AgentRef { tx, shared }
    }

    /// The agent type's name.
    pub fn name(&self) -> &'static str {
        self.shared.name
    }

    /// The agent's id.
    pub fn id(&self) -> &str {
        &self.shared.id
    }

    /// How many signals wait in the mailbox.
    pub fn queued(&self) -> usize {
        self.shared.queued.load(Ordering::Relaxed)
    }

    /// Whether the agent has stopped.
    pub fn is_stopped(&self) -> bool {
        self.tx.is_closed()
    }

    /// Delivers a signal without waiting for it to be processed. A full mailbox refuses it
    /// ([`ServerError::MailboxFull`]); a stopped agent too ([`ServerError::Stopped`]); so does
    /// a signal that breaks a CloudEvents rule ([`ServerError::InvalidSignal`]).
    pub fn cast(&self, signal: Signal) -> Result<(), ServerError> {
        self.shared.deliver(
            &self.tx,
            Envelope {
                signal,
                reply: None,
            },
        )
    }

    /// Delivers a signal and waits (up to `Options::call_timeout`) until it has been processed
    /// and its directives executed.
    pub async fn call(&self, signal: Signal) -> Result<CallOutcome, ServerError> {
        self.call_timeout(signal, self.shared.call_timeout).await
    }

    /// [`call`](AgentRef::call) with its own timeout.
    pub async fn call_timeout(
        &self,
        signal: Signal,
        timeout: Duration,
    ) -> Result<CallOutcome, ServerError> {
        let signal_type = signal.signal_type.clone();
        let (reply, answer) = oneshot::channel();
        self.shared.deliver(
            &self.tx,
            Envelope {
                signal,
                reply: Some(reply),
            },
        )?;
        match tokio::time::timeout(timeout, answer).await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(_)) => Err(self.shared.stopped()),
            Err(_) => Err(ServerError::CallTimeout {
                agent: self.shared.name,
                id: self.shared.id.to_string(),
                signal_type,
                timeout,
            }),
        }
    }

    fn control(&self, control: Control) -> Result<(), ServerError> {
        self.tx
            .send(Message::control(control))
            .map_err(|_| self.shared.stopped())
    }

    /// Runs `f` on the agent, between two signals, and returns its result.
    pub(crate) async fn inspect<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn DynAgent) -> T + Send + 'static,
    ) -> Result<T, ServerError> {
        let (reply, answer) = oneshot::channel();
        self.control(Control::Inspect(Box::new(move |agent| {
            let _ = reply.send(f(agent));
        })))?;
        answer.await.map_err(|_| self.shared.stopped())
    }

    /// Answers the agent's pending interrupt `id` with `value` ([`crate::interrupt`]) and
    /// waits until the step ran (and, with `Options::checkpoint_store`, was written). An
    /// unknown or already answered id, or a value that is not the interrupt's resume type, is
    /// [`ServerError::Interrupt`], and nothing changed; other refusals (the machine cannot
    /// take the answer in its current state) are in the outcome's errors, the interrupt still
    /// pending.
    pub async fn resume(
        &self,
        id: &str,
        value: impl serde::Serialize,
    ) -> Result<CallOutcome, ServerError> {
        let refused = |error| ServerError::Interrupt {
            agent: self.shared.name,
            id: self.shared.id.to_string(),
            error: Box::new(error),
        };
        let value = serde_json::to_value(value).map_err(|e| {
            refused(crate::interrupt::InterruptError::Malformed {
                error: e.to_string(),
            })
        })?;
        let resume = crate::interrupt::Resume {
            id: id.to_string(),
            value,
        };
        let data = serde_json::to_value(resume).unwrap_or_default();
        let outcome = self
            .call(Signal::new(crate::interrupt::RESUME_SIGNAL, data))
            .await?;
        let error = outcome.errors().find_map(|e| match e {
            AgentError::Interrupt { error } => Some(error.clone()),
            _ => None,
        });
        match error {
            Some(error) => Err(refused(error)),
            None => Ok(outcome),
        }
    }

    /// The agent's pending interrupts, in the order they were raised.
    pub async fn interrupts(&self) -> Result<Vec<crate::interrupt::PendingInterrupt>, ServerError> {
        self.inspect(|agent| agent.interrupts()).await
    }

    /// The agent's snapshot.
    pub async fn snapshot(&self) -> Result<Snapshot, ServerError> {
        self.inspect(|agent| agent.snapshot()).await
    }

    /// A copy of the agent's typed state; [`ServerError::WrongType`] if it is not an `S`.
    pub async fn state<S: AgentSpec>(&self) -> Result<S, ServerError> {
        self.agent::<S>().await.map(Agent::into_state)
    }

    /// A copy of the whole agent (state and strategy state), if it is an `S`.
    pub async fn agent<S: AgentSpec>(&self) -> Result<Agent<S>, ServerError> {
        let actual = self.shared.name;
        self.inspect(|agent| agent.as_any().downcast_ref::<Agent<S>>().cloned())
            .await?
            .ok_or(ServerError::WrongType {
                expected: S::NAME,
                actual,
            })
    }

    /// Waits until the strategy reports `Success` or `Failure` and returns that snapshot.
    ///
    /// After `timeout`, [`ServerError::CompletionTimeout`] says where the agent stands; if the
    /// agent stops first, [`ServerError::StoppedBeforeCompletion`] says why.
    pub async fn await_completion(&self, timeout: Duration) -> Result<Snapshot, ServerError> {
        let (reply, answer) = oneshot::channel();
        if self.control(Control::AwaitCompletion(reply)).is_err() {
            return self.completion_after_exit().await;
        }
        match tokio::time::timeout(timeout, answer).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => self.completion_after_exit().await,
            Err(_) => Err(ServerError::CompletionTimeout {
                agent: self.shared.name,
                id: self.shared.id.to_string(),
                timeout,
                snapshot: self.snapshot().await.ok().map(Box::new),
            }),
        }
    }

    async fn completion_after_exit(&self) -> Result<Snapshot, ServerError> {
        let report = self.shared.wait_exit().await;
        match report.snapshot {
            Some(snapshot) if snapshot.done() => Ok(snapshot),
            snapshot => Err(ServerError::StoppedBeforeCompletion {
                agent: self.shared.name,
                id: self.shared.id.to_string(),
                reason: Box::new(report.reason),
                snapshot: snapshot.map(Box::new),
            }),
        }
    }

    /// Watches the signals the agent emits (and its error signals under
    /// [`ErrorPolicy::EmitSignal`](super::ErrorPolicy::EmitSignal)), from now on. A subscriber
    /// that falls more than `Options::event_capacity` signals behind is told how many it missed
    /// ([`RecvError::Lagged`]).
    pub fn subscribe(&self) -> broadcast::Receiver<Signal> {
        self.shared
            .events
            .get_or_init(|| broadcast::channel(self.shared.event_capacity).0)
            .subscribe()
    }

    /// [`subscribe`](AgentRef::subscribe) as a stream; it ends when the agent stops. A lag is
    /// an item (`Err(missed)`), never a silent gap.
    pub fn events(&self) -> impl Stream<Item = Result<Signal, u64>> + Send + 'static {
        futures::stream::unfold(self.subscribe(), |mut rx| async move {
            match rx.recv().await {
                Ok(signal) => Some((Ok(signal), rx)),
                Err(RecvError::Lagged(missed)) => Some((Err(missed), rx)),
                Err(RecvError::Closed) => None,
            }
        })
    }

    /// Watches every step of the agent from now on: what caused it, what it emitted, the
    /// errors, and where the run stands afterwards ([`Observation`]). Observations are built
    /// only while a watcher is subscribed; one that falls more than `Options::event_capacity`
    /// steps behind is told how many it missed ([`RecvError::Lagged`]).
    pub fn watch(&self) -> broadcast::Receiver<Arc<Observation>> {
        self.shared.every_step.store(true, Ordering::Relaxed);
        self.watch_coalesced()
    }

    /// [`watch`](AgentRef::watch) for a live view, which wants the latest step more than every
    /// step: while the last observation sent is unread by some watcher, the agent sends none
    /// but keeps the latest step, and sends it once the watchers have caught up or the agent
    /// has nothing left to do, its [`skipped`](Observation::skipped) counting the steps it
    /// stands for. A flood of steps then costs the agent a count per step, not an observation.
    /// A watcher from [`watch`](AgentRef::watch) was promised every step: while the agent has
    /// one, nothing is coalesced.
    pub fn watch_coalesced(&self) -> broadcast::Receiver<Arc<Observation>> {
        self.shared
            .watchers
            .get_or_init(|| broadcast::channel(self.shared.event_capacity).0)
            .subscribe()
    }

    /// What a diagram of the agent draws: its FSM's states and transitions, its tree's nodes
    /// ([`Strategy::shape`](crate::Strategy::shape)).
    pub async fn shape(&self) -> Result<Shape, ServerError> {
        self.inspect(|agent| agent.shape()).await
    }

    /// Where the agent's run stands in the terms of its [`shape`](AgentRef::shape).
    pub async fn progress(&self) -> Result<Progress, ServerError> {
        self.inspect(|agent| agent.progress()).await
    }

    /// The handle of the child with this tag, if it is running.
    pub async fn child(&self, tag: &str) -> Result<Option<AgentRef>, ServerError> {
        let (reply, answer) = oneshot::channel();
        self.control(Control::Child {
            tag: tag.to_string(),
            reply,
        })?;
        answer.await.map_err(|_| self.shared.stopped())
    }

    /// The running children, by tag.
    pub async fn children(&self) -> Result<Vec<(String, AgentRef)>, ServerError> {
        let (reply, answer) = oneshot::channel();
        self.control(Control::Children(reply))?;
        answer.await.map_err(|_| self.shared.stopped())
    }

    /// Stops the agent gracefully and returns its report. Signals queued before this call are
    /// processed first; running async actions are cancelled and listed; children are stopped.
    /// On an agent that has already stopped, returns the report it stopped with.
    pub async fn stop(&self) -> StopReport {
        self.stop_with(StopReason::Requested).await
    }

    pub(crate) async fn stop_with(&self, reason: StopReason) -> StopReport {
        let (reply, answer) = oneshot::channel();
        let sent = self.control(Control::Stop {
            reason,
            reply: Some(reply),
        });
        if sent.is_ok()
            && let Ok(report) = answer.await
        {
            return report;
        }
        self.stopped().await
    }

    /// Asks the agent to stop, without waiting.
    pub(crate) fn request_stop(&self, reason: StopReason) {
        let _ = self.control(Control::Stop {
            reason,
            reply: None,
        });
    }

    /// Waits until the agent has stopped, however that happens, and returns its report.
    pub async fn stopped(&self) -> StopReport {
        self.shared.wait_exit().await
    }

    /// Writes a checkpoint of the agent to `store` under its id. The agent waits (processing
    /// nothing) until the store has taken it, so the checkpoint is exactly the agent's state at
    /// that point.
    pub async fn checkpoint<T: Store + ?Sized>(&self, store: &T) -> Result<(), ServerError> {
        self.persist(store, false).await
    }

    /// Writes a checkpoint (as [`checkpoint`](AgentRef::checkpoint)) and stops the agent; if
    /// the store fails, the agent keeps running and the error is returned. Thaw it with
    /// [`AgentServer::thaw`].
    pub async fn hibernate<T: Store + ?Sized>(&self, store: &T) -> Result<StopReport, ServerError> {
        self.persist(store, true).await?;
        Ok(self.stopped().await)
    }

    async fn persist<T: Store + ?Sized>(
        &self,
        store: &T,
        then_stop: bool,
    ) -> Result<(), ServerError> {
        let key = self.id();
        let (reply, answer) = oneshot::channel();
        self.control(Control::Checkpoint { then_stop, reply })?;
        let (bytes, decide) =
            answer
                .await
                .map_err(|_| self.shared.stopped())?
                .map_err(|error| ServerError::Checkpoint {
                    key: key.to_string(),
                    error,
                })?;
        let saved = store.save(key, &bytes).await;
        let _ = decide.send(saved.is_ok());
        saved.map_err(ServerError::Store)
    }
}

impl AsRef<AgentRef> for AgentRef {
    fn as_ref(&self) -> &AgentRef {
        self
    }
}

impl fmt::Debug for AgentRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentRef")
            .field("agent", &self.shared.name)
            .field("id", &self.shared.id)
            .field("queued", &self.queued())
            .field("stopped", &self.is_stopped())
            .finish()
    }
}

/// A running agent of type `S`: one tokio task, a bounded mailbox, real timers and ticks.
///
/// ```
/// # use agent_runtime::*;
/// # use agent_runtime::server::{AgentServer, Options};
/// # async fn demo<S: AgentSpec + Default>() -> Result<(), Box<dyn std::error::Error>> {
/// let server = AgentServer::start(S::new(), Options::default()).await?;
/// server.cast(Signal::new("order.checkout", serde_json::json!({})))?;
/// let outcome = server.call(Signal::new("order.pay", serde_json::json!({"amount": 12.5}))).await?;
/// println!("{:?} -> {:?}", outcome.directives, outcome.snapshot.status);
/// let state: S = server.state().await?;
/// let report = server.stop().await;
/// # let _ = (state, report); Ok(()) }
/// ```
pub struct AgentServer<S: AgentSpec> {
    inner: AgentRef,
    _agent: PhantomData<fn() -> S>,
}

impl<S: AgentSpec> Clone for AgentServer<S> {
    fn clone(&self) -> Self {
        AgentServer {
            inner: self.inner.clone(),
            _agent: PhantomData,
        }
    }
}

impl<S: AgentSpec> AsRef<AgentRef> for AgentServer<S> {
    fn as_ref(&self) -> &AgentRef {
        &self.inner
    }
}

impl<S: AgentSpec> fmt::Debug for AgentServer<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
    }
}

impl<S: AgentSpec> AgentServer<S> {
    /// Starts `agent` in its own task: runs the strategy's `init` and its directives, then
    /// returns. Invalid options or routes (a malformed pattern, a priority out of range) fail
    /// here, before anything runs.
    pub async fn start(agent: Agent<S>, options: Options) -> Result<Self, ServerError> {
        Self::launch(agent, options, None).await
    }

    /// Starts the agent checkpointed under `key` in `store`, exactly as it was: state, strategy
    /// state, pending timers (a timer that fell due while hibernated fires at once), cron jobs,
    /// and the async instructions it was running (run again). The checkpoint stays in the store.
    ///
    /// A missing, corrupt or incompatible checkpoint is a [`ServerError::Checkpoint`] naming
    /// what is wrong.
    pub async fn thaw<T: Store + ?Sized>(
        store: &T,
        key: &str,
        options: Options,
    ) -> Result<Self, ServerError> {
        let fail = |error| ServerError::Checkpoint {
            key: key.to_string(),
            error,
        };
        let bytes = store
            .load(key)
            .await?
            .ok_or_else(|| fail(CheckpointError::NotFound))?;
        let checkpoint = Checkpoint::decode(&bytes).map_err(fail)?;
        // A checkpoint of an older definition is migrated whole (pending timers name states).
        let checkpoint = match checkpoint.migrated::<S>().map_err(fail)? {
            Some(migrated) => migrated,
            None => checkpoint,
        };
        let agent = checkpoint.restore::<S>().map_err(fail)?;
        Self::launch(agent, options, Some(Restore::from(checkpoint))).await
    }

    async fn launch(
        agent: Agent<S>,
        options: Options,
        restore: Option<Restore>,
    ) -> Result<Self, ServerError> {
        // A journaled agent's new run continues after what its journal already holds.
        let journal_end = match &options.journal {
            Some(journal) => Some(journal.store.journal_end(agent.id()).await?),
            None => None,
        };
        let (inner, ready) = spawn(
            Box::new(agent),
            Arc::new(options),
            None,
            restore,
            journal_end,
        )?;
        // `init` and a restore run before the first signal; wait so the caller sees their
        // effects (timers armed, children started).
        let _ = ready.await;
        Ok(AgentServer {
            inner,
            _agent: PhantomData,
        })
    }

    /// The untyped handle.
    pub fn handle(&self) -> &AgentRef {
        &self.inner
    }

    /// The agent's id (its checkpoint key).
    pub fn id(&self) -> &str {
        self.inner.id()
    }

    /// See [`AgentRef::resume`].
    pub async fn resume(
        &self,
        id: &str,
        value: impl serde::Serialize,
    ) -> Result<CallOutcome, ServerError> {
        self.inner.resume(id, value).await
    }

    /// See [`AgentRef::interrupts`].
    pub async fn interrupts(&self) -> Result<Vec<crate::interrupt::PendingInterrupt>, ServerError> {
        self.inner.interrupts().await
    }

    /// See [`AgentRef::cast`].
    pub fn cast(&self, signal: Signal) -> Result<(), ServerError> {
        self.inner.cast(signal)
    }

    /// See [`AgentRef::call`].
    pub async fn call(&self, signal: Signal) -> Result<CallOutcome, ServerError> {
        self.inner.call(signal).await
    }

    /// See [`AgentRef::call_timeout`].
    pub async fn call_timeout(
        &self,
        signal: Signal,
        timeout: Duration,
    ) -> Result<CallOutcome, ServerError> {
        self.inner.call_timeout(signal, timeout).await
    }

    /// A copy of the typed state.
    pub async fn state(&self) -> Result<S, ServerError> {
        self.inner.state::<S>().await
    }

    /// A copy of the whole agent: id, state and strategy state.
    pub async fn agent(&self) -> Result<Agent<S>, ServerError> {
        self.inner.agent::<S>().await
    }

    /// See [`AgentRef::snapshot`].
    pub async fn snapshot(&self) -> Result<Snapshot, ServerError> {
        self.inner.snapshot().await
    }

    /// See [`AgentRef::await_completion`].
    pub async fn await_completion(&self, timeout: Duration) -> Result<Snapshot, ServerError> {
        self.inner.await_completion(timeout).await
    }

    /// See [`AgentRef::subscribe`].
    pub fn subscribe(&self) -> broadcast::Receiver<Signal> {
        self.inner.subscribe()
    }

    /// See [`AgentRef::events`].
    pub fn events(&self) -> impl Stream<Item = Result<Signal, u64>> + Send + 'static {
        self.inner.events()
    }

    /// See [`AgentRef::watch`].
    pub fn watch(&self) -> broadcast::Receiver<Arc<Observation>> {
        self.inner.watch()
    }

    /// See [`AgentRef::watch_coalesced`].
    pub fn watch_coalesced(&self) -> broadcast::Receiver<Arc<Observation>> {
        self.inner.watch_coalesced()
    }

    /// See [`AgentRef::child`].
    pub async fn child(&self, tag: &str) -> Result<Option<AgentRef>, ServerError> {
        self.inner.child(tag).await
    }

    /// See [`AgentRef::children`].
    pub async fn children(&self) -> Result<Vec<(String, AgentRef)>, ServerError> {
        self.inner.children().await
    }

    /// See [`AgentRef::stop`].
    pub async fn stop(&self) -> StopReport {
        self.inner.stop().await
    }

    /// See [`AgentRef::stopped`].
    pub async fn stopped(&self) -> StopReport {
        self.inner.stopped().await
    }

    /// See [`AgentRef::checkpoint`].
    pub async fn checkpoint<T: Store + ?Sized>(&self, store: &T) -> Result<(), ServerError> {
        self.inner.checkpoint(store).await
    }

    /// See [`AgentRef::hibernate`].
    pub async fn hibernate<T: Store + ?Sized>(&self, store: &T) -> Result<StopReport, ServerError> {
        self.inner.hibernate(store).await
    }
}
