//! What a tick gives nodes: the blackboard, the time, and a way to talk to the host.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::directive::Directive;
use crate::instruction::Instruction;

/// The context of one tick: the blackboard (the agent's typed state), the time the tick was
/// taken at, where directives go, and the results of async actions that came back.
#[derive(Debug)]
pub struct Ctx<'a, S> {
    state: &'a mut S,
    now: Duration,
    out: &'a mut Vec<Directive>,
    inbox: &'a mut Inbox,
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
            now,
            out,
            inbox,
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
        self.now
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

/// Completions of async actions waiting for their leaf, and the id counter for new ones.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Inbox {
    /// Completed instructions not yet taken by their leaf.
    #[serde(default)]
    pub completions: Vec<Instruction>,
    /// The last instruction id handed out.
    #[serde(default)]
    pub next_id: u64,
}

impl Inbox {
    /// Whether a leaf started the async instruction `id` (ids are handed out in order).
    pub fn issued(&self, id: &str) -> bool {
        id.strip_prefix("bt-")
            .and_then(|n| n.parse::<u64>().ok())
            .is_some_and(|n| n >= 1 && n <= self.next_id)
    }
}
