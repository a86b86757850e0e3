//! What a tick gives nodes: the blackboard, the time, and a way to talk to the host.

use std::cell::Cell;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Status, TickRecord};
use crate::directive::Directive;
use crate::instruction::Instruction;
use crate::interrupt::{INTERRUPT_SIGNAL, InterruptSpec, Interrupts, Resume};
use crate::signal::Signal;

/// The context of one tick: the blackboard (the agent's typed state), the time the tick was
/// taken at, where directives go, and the results of async actions that came back.
#[derive(Debug)]
pub struct Ctx<'a, S> {
    state: &'a mut S,
    // Read from `clock` by the first node that asks, then the same for the whole tick: a tree
    // without time nodes never reads the clock (a system call on some platforms).
    now: Cell<Option<Duration>>,
    clock: fn() -> Duration,
    out: &'a mut Vec<Directive>,
    inbox: &'a mut Inbox,
    // Whether nodes tick through the observed path: DEBUG on (action leaves' events) or TRACE
    // (nodes' status changes), or a record to fill. Read once per tick, so an unobserved tick
    // tests one flag per node, and a leaf's own test of it folds into its parent's.
    observed: bool,
    // The visiting-order index of the node ticking now (`usize::MAX` before the root).
    current: usize,
    record: Option<&'a mut TickRecord>,
    // The id of the agent ticking the tree: interrupt ids start with it.
    agent_id: &'a str,
}

impl<'a, S> Ctx<'a, S> {
    /// A context for one tick at `now` (a [`Clock`](super::Clock) reading).
    pub fn new(
        state: &'a mut S,
        now: Duration,
        out: &'a mut Vec<Directive>,
        inbox: &'a mut Inbox,
    ) -> Self {
        Ctx {
            state,
            now: Cell::new(Some(now)),
            clock: || Duration::ZERO,
            out,
            inbox,
            observed: crate::trace::on!(DEBUG),
            current: usize::MAX,
            record: None,
            agent_id: "",
        }
    }

    /// A context for one tick whose time is read from `clock` when a node first asks for it,
    /// at most once per tick.
    pub fn with_clock(
        state: &'a mut S,
        clock: fn() -> Duration,
        out: &'a mut Vec<Directive>,
        inbox: &'a mut Inbox,
    ) -> Self {
        Self::with_clock_observed(state, clock, out, inbox, crate::trace::on!(DEBUG))
    }

    /// [`with_clock`](Self::with_clock) for a caller that read the tracing level already
    /// (`observed`: DEBUG on), so a tick reads it once.
    #[inline(always)]
    pub(crate) fn with_clock_observed(
        state: &'a mut S,
        clock: fn() -> Duration,
        out: &'a mut Vec<Directive>,
        inbox: &'a mut Inbox,
        observed: bool,
    ) -> Self {
        Ctx {
            state,
            now: Cell::new(None),
            clock,
            out,
            inbox,
            observed,
            current: usize::MAX,
            record: None,
            agent_id: "",
        }
    }

    /// Records the status of every node this tick ticks into `record`.
    pub fn recording(mut self, record: &'a mut TickRecord) -> Self {
        self.observed = true;
        self.record = Some(record);
        self
    }

    /// Ticks for agent `agent_id`: the ids of the interrupts `ask` leaves raise start with it.
    pub fn for_agent(mut self, agent_id: &'a str) -> Self {
        self.agent_id = agent_id;
        self
    }

    /// Whether nodes tick through the observed path (DEBUG on, or recorded): leaves report
    /// their runs only then.
    #[inline(always)]
    pub(super) fn observed(&self) -> bool {
        self.observed
    }

    /// Runs `f` with a copy of this context: the same references, reborrowed, and the time
    /// and position handed back afterwards. What out-of-line code (the observed path) gets
    /// instead of this context's address: a context whose address never escapes the inlined
    /// tick is kept in registers, so its flags fold into constants and the state pointer is
    /// not reloaded after every write to the blackboard.
    #[inline(always)]
    pub(super) fn detached<R>(&mut self, f: impl FnOnce(&mut Ctx<'_, S>) -> R) -> R {
        let mut copy = Ctx {
            state: &mut *self.state,
            now: Cell::new(self.now.get()),
            clock: self.clock,
            out: &mut *self.out,
            inbox: &mut *self.inbox,
            observed: self.observed,
            current: self.current,
            record: self.record.as_deref_mut(),
            agent_id: self.agent_id,
        };
        let result = f(&mut copy);
        let (now, current) = (copy.now.get(), copy.current);
        self.now.set(now);
        self.current = current;
        result
    }

    /// The blackboard and the directives, for out-of-line code that needs no more of the
    /// context (see [`detached`](Self::detached)).
    #[inline(always)]
    pub(super) fn state_and_out(&mut self) -> (&mut S, &mut Vec<Directive>) {
        (self.state, self.out)
    }

    /// The directives, for out-of-line code that only reports (see
    /// [`detached`](Self::detached)).
    #[inline(always)]
    pub(super) fn out(&mut self) -> &mut Vec<Directive> {
        self.out
    }

    /// Enters the node `offset` after the current one: returns its index and the current one's.
    #[inline]
    pub(super) fn enter(&mut self, offset: usize) -> (usize, usize) {
        let index = self.current.wrapping_add(offset);
        (index, std::mem::replace(&mut self.current, index))
    }

    /// Leaves node `index`, which returned `status`, back to its `parent`.
    #[inline]
    pub(super) fn leave(&mut self, index: usize, parent: usize, status: Status) {
        self.current = parent;
        if let Some(record) = self.record.as_deref_mut() {
            record.set(index, status);
        }
    }

    /// The blackboard.
    #[inline]
    pub fn state(&self) -> &S {
        self.state
    }

    /// The blackboard, mutably.
    #[inline]
    pub fn state_mut(&mut self) -> &mut S {
        self.state
    }

    /// The blackboard and the directives, together (for leaves that write both).
    #[inline]
    pub(crate) fn parts(&mut self) -> (&mut S, &mut Vec<Directive>) {
        (self.state, self.out)
    }

    /// The time of this tick; every node of the tick sees the same value.
    #[inline]
    pub fn now(&self) -> Duration {
        match self.now.get() {
            Some(now) => now,
            None => {
                let now = (self.clock)();
                self.now.set(Some(now));
                now
            }
        }
    }

    /// Hands a directive to the host.
    #[inline]
    pub fn emit(&mut self, directive: Directive) {
        self.out.push(directive);
    }

    /// Hands several directives to the host.
    #[inline]
    pub fn emit_all(&mut self, directives: impl IntoIterator<Item = Directive>) {
        self.out.extend(directives);
    }

    /// A fresh instruction id for async work started by a leaf.
    pub fn next_instruction_id(&mut self) -> String {
        self.inbox.next_id += 1;
        format!("bt-{}", self.inbox.next_id)
    }

    /// Takes the completion of the async instruction `id`, if it came back.
    pub fn take_completion(&mut self, id: &str) -> Option<Instruction> {
        let pos = self.inbox.completions.iter().position(|c| c.id == id)?;
        Some(self.inbox.completions.remove(pos))
    }
}

/// Completions of async actions waiting for their leaf, the id counter for new ones, and the
/// interrupts `ask` leaves raised.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Inbox {
    /// Completed instructions not yet taken by their leaf.
    #[serde(default)]
    pub completions: Vec<Instruction>,
    /// The last instruction id handed out.
    #[serde(default)]
    pub next_id: u64,
    /// The interrupts raised by `ask` leaves and those still waiting for an answer.
    #[serde(default, skip_serializing_if = "Interrupts::is_empty")]
    pub interrupts: Interrupts,
    /// Answers accepted by `resume` and not yet taken by their leaf (only between the
    /// answer and the tick it triggers: never in a checkpoint).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<Resume>,
}

impl<S> Ctx<'_, S> {
    /// Raises interrupt `spec` with `payload` for an `ask` leaf: records it as pending and
    /// emits its [`Directive::Interrupt`]. Returns its id.
    pub fn raise_interrupt(&mut self, spec: &InterruptSpec, payload: serde_json::Value) -> String {
        let pending = self.inbox.interrupts.raise(self.agent_id, spec, payload);
        tracing::debug!(
            target: "stratagem::tree",
            id = self.agent_id,
            interrupt = %pending.id,
            "interrupt raised"
        );
        let id = pending.id.clone();
        let data = serde_json::to_value(&pending).unwrap_or(serde_json::Value::Null);
        self.out.push(Directive::Interrupt(Signal::with_id(
            pending.id,
            INTERRUPT_SIGNAL,
            data,
        )));
        id
    }

    /// Takes the answer to interrupt `id`, if `resume` delivered it.
    pub fn take_answer(&mut self, id: &str) -> Option<serde_json::Value> {
        let pos = self.inbox.answers.iter().position(|a| a.id == id)?;
        Some(self.inbox.answers.remove(pos).value)
    }

    /// Withdraws pending interrupt `id` (its `ask` leaf was halted): an answer to it is then
    /// refused as already answered.
    pub fn withdraw_interrupt(&mut self, id: &str) {
        self.inbox.interrupts.pending.retain(|p| p.id != id);
    }
}

impl Inbox {
    /// Whether a leaf started the async instruction `id` (ids are handed out in order).
    pub fn issued(&self, id: &str) -> bool {
        id.strip_prefix("bt-")
            .and_then(|n| n.parse::<u64>().ok())
            .is_some_and(|n| n >= 1 && n <= self.next_id)
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::time::Duration;

    use crate::bt::{Condition, Node, Sequence, Status, Timeout, TreeRun, Wait};
    use crate::nodes;

    thread_local! {
        static READS: Cell<u32> = const { Cell::new(0) };
        static NOW: Cell<Duration> = const { Cell::new(Duration::ZERO) };
    }

    /// Counts its readings; time moves 10ms per reading.
    fn counting_clock() -> Duration {
        READS.with(|reads| reads.set(reads.get() + 1));
        NOW.with(|now| {
            now.set(now.get() + Duration::from_millis(10));
            now.get()
        })
    }

    fn reads() -> u32 {
        READS.with(|reads| reads.replace(0))
    }

    #[test]
    fn a_tree_without_time_nodes_never_reads_the_clock() {
        let tree = Sequence::new(nodes![
            Condition::new("ready", |ready: &bool| *ready),
            Condition::new("still ready", |ready: &bool| *ready),
        ]);
        let mut run = TreeRun::default();
        let mut out = Vec::new();
        reads();
        for _ in 0..10 {
            let status = run.tick_with_clock(&tree, &mut true, counting_clock, &mut out);
            assert_eq!(status, Status::Success);
        }
        assert_eq!(reads(), 0);
    }

    /// Ticks `tree` until it is done, checking that each tick read the clock exactly once;
    /// returns how many ticks were running.
    fn ticks_reading_the_clock_once<N: Node<()>>(tree: &N, run: &mut TreeRun<N::State>) -> u32 {
        let mut out = Vec::new();
        reads();
        let mut ticks = 0;
        while run.tick_with_clock(tree, &mut (), counting_clock, &mut out) == Status::Running {
            ticks += 1;
            assert!(ticks < 100, "the waits end");
            assert_eq!(reads(), 1, "tick {ticks}");
        }
        assert_eq!(reads(), 1, "the last tick");
        ticks
    }

    #[test]
    fn a_tree_with_time_nodes_reads_the_clock_once_per_tick() {
        // Three nodes ask for the time on the first tick (timeout, wait), yet one reading serves.
        let tree = Timeout::new(
            Duration::from_secs(60),
            Sequence::new(nodes![
                Wait::new(Duration::from_millis(25)),
                Wait::new(Duration::from_millis(25)),
            ]),
        );
        let ticks = ticks_reading_the_clock_once(&tree, &mut TreeRun::default());
        assert!(ticks >= 4, "the waits took several ticks: {ticks}");
    }

    #[test]
    fn an_observed_tick_reads_the_clock_once_and_records_every_node() {
        // Recording sends every node through the out-of-line observed path, each with a copy of
        // the context: the time the first wait read is handed back, so the second, starting
        // in the same tick, does not read the clock again; each node's status lands at its
        // own index.
        let tree = Sequence::new(nodes![
            Wait::new(Duration::from_millis(25)),
            Wait::new(Duration::from_millis(25)),
        ]);
        let mut run = TreeRun::default();
        assert!(run.record::<(), _>(&tree));
        ticks_reading_the_clock_once(&tree, &mut run);
        let last: Vec<_> = run
            .last_statuses()
            .expect("recording")
            .iter()
            .map(|n| n.map(|n| n.status))
            .collect();
        let done = Some(Status::Success);
        assert_eq!(last, [done, done, done], "the sequence and both waits");
    }
}
