//! A tree's run: its nodes' progress plus what the run needs between ticks.

use std::fmt::Write as _;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Ctx, Inbox, Node, NodeState, NodeTick, Status, TickRecord};
use crate::directive::Directive;
use crate::instruction::Instruction;

/// The progress of one tree: node states, the last status, the tick count and the async
/// completions waiting for their leaves. Plain data: the behaviour-tree strategy keeps it in the
/// agent, so it is checkpointed with it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(bound(
    serialize = "T: Serialize",
    deserialize = "T: serde::de::DeserializeOwned"
))]
pub struct TreeRun<T> {
    /// The nodes' progress, shaped like the tree.
    pub nodes: T,
    /// What the last tick returned; `None` before the first. Written by the ticks: changing it
    /// by hand changes what the snapshot reports, not whether the next tick runs (a finished
    /// run is known by its own flag; [`Agent::restart`](crate::Agent::restart) starts over).
    pub status: Option<Status>,
    /// How many ticks ran.
    pub ticks: u64,
    /// Async completions waiting for their leaves, and the instruction id counter. Fill it
    /// through [`complete`](TreeRun::complete) and [`answer`](TreeRun::answer): they mark the
    /// run so that the next tick clears what no leaf took. An entry pushed by hand is still
    /// taken by its leaf, but a stale one stays until such a tick.
    #[serde(default)]
    pub inbox: Inbox,
    /// Each node's last status, while recording ([`record`](TreeRun::record)); never saved.
    #[serde(skip)]
    recording: Option<TickRecord>,
    // Whether a tick must take the general path: the run is done, records, or its inbox may
    // hold entries to clear after the tick. Set when one of them starts, cleared by a general
    // tick that leaves none; a restored run starts set (its status and inbox came from a
    // checkpoint). One test on the common tick instead of three.
    #[serde(skip, default = "general_after_restore")]
    general: bool,
    // Where the common tick's nodes put directives: empty between ticks (taken when not), so a
    // tick sets up no list of its own.
    #[serde(skip)]
    emitted: Vec<Directive>,
}

fn general_after_restore() -> bool {
    true
}

/// What one tick produced.
#[derive(Debug)]
pub struct TickReport {
    /// The root's status.
    pub status: Status,
    /// Directives for the host, in the order the nodes produced them.
    pub directives: Vec<Directive>,
}

impl<T: NodeState> TreeRun<T> {
    /// Ticks `tree` once at `now` with `state` as the blackboard.
    #[inline]
    pub fn tick<S, N>(&mut self, tree: &N, state: &mut S, now: Duration) -> TickReport
    where
        N: Node<S, State = T>,
    {
        let mut directives = Vec::new();
        let status = self.tick_into(tree, state, now, &mut directives);
        TickReport { status, directives }
    }

    /// Ticks `tree` once, appending directives to `out` (no allocation when there are none).
    #[inline]
    pub fn tick_into<S, N>(
        &mut self,
        tree: &N,
        state: &mut S,
        now: Duration,
        out: &mut Vec<Directive>,
    ) -> Status
    where
        N: Node<S, State = T>,
    {
        let mut ctx = Ctx::new(state, now, out, &mut self.inbox);
        if let Some(record) = &mut self.recording {
            record.start_tick(self.ticks + 1);
            ctx = ctx.recording(record);
        }
        let status = super::tick_node(tree, &mut self.nodes, &mut ctx);
        self.finish_tick(status)
    }

    /// Ticks `tree` once like [`tick_into`](Self::tick_into), reading the time from `clock` only
    /// if a node asks for it (at most once): a tree without time nodes never reads the clock.
    #[inline]
    pub fn tick_with_clock<S, N>(
        &mut self,
        tree: &N,
        state: &mut S,
        clock: fn() -> Duration,
        out: &mut Vec<Directive>,
    ) -> Status
    where
        N: Node<S, State = T>,
    {
        self.tick_for_agent("", tree, state, clock, out)
    }

    /// [`tick_with_clock`](Self::tick_with_clock) for agent `agent_id`: the interrupts its
    /// `ask` leaves raise have ids `<agent_id>/<interrupt>/<n>`.
    #[inline]
    pub fn tick_for_agent<S, N>(
        &mut self,
        agent_id: &str,
        tree: &N,
        state: &mut S,
        clock: fn() -> Duration,
        out: &mut Vec<Directive>,
    ) -> Status
    where
        N: Node<S, State = T>,
    {
        let debug = crate::trace::on!(DEBUG);
        self.tick_observed(agent_id, tree, state, clock, out, debug)
    }

    /// [`tick_for_agent`](Self::tick_for_agent) for a caller that read the tracing level
    /// already (`debug`), so a tick reads it once.
    #[inline(always)]
    pub(crate) fn tick_observed<S, N>(
        &mut self,
        agent_id: &str,
        tree: &N,
        state: &mut S,
        clock: fn() -> Duration,
        out: &mut Vec<Directive>,
        debug: bool,
    ) -> Status
    where
        N: Node<S, State = T>,
    {
        let mut ctx =
            Ctx::with_clock_observed(state, clock, out, &mut self.inbox, debug).for_agent(agent_id);
        if let Some(record) = &mut self.recording {
            record.start_tick(self.ticks + 1);
            ctx = ctx.recording(record);
        }
        let status = super::tick_node(tree, &mut self.nodes, &mut ctx);
        self.finish_tick(status)
    }

    /// Whether the next tick can take [`tick_plain`](Self::tick_plain): the run is not done,
    /// nothing is recorded, nothing in the inbox is to be cleared after it.
    #[inline(always)]
    pub(crate) fn is_plain(&self) -> bool {
        !self.general
    }

    /// A tick for a run that [`is_plain`](Self::is_plain), unobserved: the tree alone, then the
    /// count and status. Directives wait in the run for [`take_emitted`](Self::take_emitted).
    #[inline(always)]
    pub(crate) fn tick_plain<S, N>(
        &mut self,
        agent_id: &str,
        tree: &N,
        state: &mut S,
        clock: fn() -> Duration,
    ) -> Status
    where
        N: Node<S, State = T>,
    {
        let mut ctx =
            Ctx::with_clock_observed(state, clock, &mut self.emitted, &mut self.inbox, false)
                .for_agent(agent_id);
        let status = super::tick_node(tree, &mut self.nodes, &mut ctx);
        self.ticks += 1;
        self.status = Some(status);
        // A finished run's next tick checks it is done on the general path (on most paths
        // through the tree the status is a constant, and this test folds away).
        if status.is_done() {
            self.general = true;
        }
        status
    }

    /// The directives [`tick_plain`](Self::tick_plain) emitted, leaving none.
    #[inline(always)]
    pub(crate) fn take_emitted(&mut self) -> Vec<Directive> {
        // Nothing emitted (most ticks): a fresh empty list, written as constants, rather than
        // the field's, read back from memory.
        if self.emitted.is_empty() {
            return Vec::new();
        }
        std::mem::take(&mut self.emitted)
    }

    #[inline(always)]
    fn finish_tick(&mut self, status: Status) -> Status {
        // A completion no leaf took during the tick belongs to a halted leaf: it is stale; so
        // is an answer, whose leaf was halted before it could take it. One test for both
        // first (most ticks have neither): clearing runs the elements' drop loop even for an
        // empty list.
        // The count and status first: stored after the inbox test, the status would be kept
        // across it on the stack.
        self.ticks += 1;
        self.status = Some(status);
        let inbox = &mut self.inbox;
        if (inbox.completions.len() | inbox.answers.len()) != 0 {
            inbox.completions.clear();
            inbox.answers.clear();
        }
        self.general = self.recording.is_some() || status.is_done();
        status
    }

    /// Halts the tree (each running node exactly once); returns the directives halting produced.
    #[inline]
    pub fn halt<S, N>(&mut self, tree: &N, state: &mut S, now: Duration) -> Vec<Directive>
    where
        N: Node<S, State = T>,
    {
        let mut out = Vec::new();
        let mut ctx = Ctx::new(state, now, &mut out, &mut self.inbox);
        super::halt_running(tree, &mut self.nodes, &mut ctx);
        out
    }

    /// Records from now on the status each node returns ([`last_statuses`](Self::last_statuses)),
    /// at the cost of a slower tick; what an inspector turns on while it watches. Returns
    /// `false` (and records nothing) for a tree with a custom node that misstates its
    /// [`SIZE`](Node::SIZE), whose nodes could not be told apart.
    pub fn record<S, N>(&mut self, tree: &N) -> bool
    where
        N: Node<S, State = T>,
    {
        let mut visited = 0;
        tree.visit(&self.nodes, 0, &mut |_| visited += 1);
        if visited != N::SIZE {
            self.recording = None;
            return false;
        }
        if self.recording.is_none() {
            self.recording = Some(TickRecord::new(visited));
        }
        self.general = true;
        true
    }

    /// Stops recording and forgets the statuses recorded.
    pub fn stop_recording(&mut self) {
        self.recording = None;
    }

    /// Each node's last status and the tick it returned it on, in visiting order, while
    /// recording; `None` otherwise.
    pub fn last_statuses(&self) -> Option<&[Option<NodeTick>]> {
        self.recording.as_ref().map(TickRecord::nodes)
    }

    /// Hands an async action's completion to the tree; its leaf takes it on the next tick.
    /// Returns `false` (and drops it) when no leaf of this run started that instruction.
    pub fn complete(&mut self, completion: Instruction) -> bool {
        if !self.inbox.issued(&completion.id) {
            return false;
        }
        self.inbox.completions.push(completion);
        self.general = true;
        true
    }

    /// Hands the answer to pending interrupt `id` to the tree (no longer pending); its `ask`
    /// leaf takes it on the next tick. An unknown or already answered id is refused and
    /// nothing changes. The caller checks the value's type first.
    pub fn answer(
        &mut self,
        agent: &str,
        agent_id: &str,
        id: &str,
        value: serde_json::Value,
    ) -> Result<(), crate::interrupt::InterruptError> {
        let at = self.inbox.interrupts.find(agent, agent_id, id)?;
        let pending = self.inbox.interrupts.pending.remove(at);
        self.inbox.answers.push(crate::interrupt::Resume {
            id: pending.id,
            value,
        });
        self.general = true;
        Ok(())
    }

    /// The tree as indented lines, running nodes marked with `*`:
    ///
    /// ```text
    /// * reactive_sequence
    ///     condition battery_ok
    ///   * timeout(2s)
    ///     * action move_to
    /// ```
    pub fn render<S, N>(&self, tree: &N) -> String
    where
        N: Node<S, State = T>,
    {
        let mut text = String::new();
        tree.visit(&self.nodes, 0, &mut |v| {
            let mark = if v.running { "* " } else { "  " };
            let _ = writeln!(text, "{:indent$}{mark}{}", "", v.kind, indent = v.depth * 2);
        });
        text
    }

    /// The running leaves and decorators, outermost first, joined with ` > `: a one-line view
    /// of where the tree is (`reactive_sequence > timeout(2s) > action move_to`).
    pub fn running_path<S, N>(&self, tree: &N) -> String
    where
        N: Node<S, State = T>,
    {
        let mut path = String::new();
        tree.visit(&self.nodes, 0, &mut |v| {
            if v.running {
                if !path.is_empty() {
                    path.push_str(" > ");
                }
                let _ = write!(path, "{}", v.kind);
            }
        });
        path
    }
}
