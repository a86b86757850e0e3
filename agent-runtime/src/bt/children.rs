//! Children of composites: cons lists of nodes, addressed by index.
//!
//! `(A, (B, ()))` is a list of two children. Indexing recurses through the list; with the list's
//! length known at compile time the recursion unrolls into a jump over concrete calls, so a
//! composite ticks its children without boxing or dynamic dispatch.

use serde::{Deserialize, Serialize};

use super::{Ctx, Node, NodeState, Status, Visit, halt_running, tick_child};

/// One child's progress plus, for `parallel`, how it completed in the current activation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Slot<T> {
    /// The child's own progress.
    pub node: T,
    /// `Some` once the child completed in the parent's current activation (`parallel` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done: Option<Status>,
}

/// The children of a composite node.
pub trait Children<S> {
    /// The children's progress.
    type State: NodeState;
    /// How many children there are.
    const LEN: usize;
    /// How many nodes the children and their descendants are ([`Node::SIZE`] summed).
    const SIZE: usize;

    /// Ticks child `i`. `at` is the visiting-order offset of the list's first child from the
    /// parent (1 when the parent calls; lists inside lists add what precedes them), so each
    /// child's status can be recorded under its index.
    fn tick(&self, i: usize, at: usize, state: &mut Self::State, ctx: &mut Ctx<'_, S>) -> Status;

    /// Ticks children from `start` on, in order, while they return `go_on`; returns the index
    /// and status of the first that did not, or `None` when all did. One pass down the list,
    /// however many children run. `at` is as for [`tick`](Children::tick).
    fn tick_while(
        &self,
        start: usize,
        at: usize,
        go_on: Status,
        state: &mut Self::State,
        ctx: &mut Ctx<'_, S>,
    ) -> Option<(usize, Status)>;

    /// Halts every running child except child `keep` (pass `usize::MAX` to halt them all).
    fn halt_except(&self, keep: usize, state: &mut Self::State, ctx: &mut Ctx<'_, S>);

    /// Whether child `i` is running.
    fn is_running(&self, i: usize, state: &Self::State) -> bool;

    /// How child `i` completed in the current activation, if it did.
    fn done(&self, i: usize, state: &Self::State) -> Option<Status>;

    /// Records how child `i` completed.
    fn set_done(&self, i: usize, state: &mut Self::State, done: Status);

    /// Forgets every completion.
    fn clear_done(&self, state: &mut Self::State);

    /// Visits every child.
    fn visit(&self, state: &Self::State, depth: usize, f: &mut dyn FnMut(Visit<'_>));
}

impl<S> Children<S> for () {
    type State = ();
    const LEN: usize = 0;
    const SIZE: usize = 0;

    fn tick(&self, _: usize, _: usize, _: &mut (), _: &mut Ctx<'_, S>) -> Status {
        // Composites never index past `LEN`; failing is the harmless answer if one did.
        Status::Failure
    }
    fn tick_while(
        &self,
        _: usize,
        _: usize,
        _: Status,
        _: &mut (),
        _: &mut Ctx<'_, S>,
    ) -> Option<(usize, Status)> {
        None
    }
    fn halt_except(&self, _: usize, _: &mut (), _: &mut Ctx<'_, S>) {}
    fn is_running(&self, _: usize, _: &()) -> bool {
        false
    }
    fn done(&self, _: usize, _: &()) -> Option<Status> {
        None
    }
    fn set_done(&self, _: usize, _: &mut (), _: Status) {}
    fn clear_done(&self, _: &mut ()) {}
    fn visit(&self, _: &(), _: usize, _: &mut dyn FnMut(Visit<'_>)) {}
}

impl<S, H: Node<S>, T: Children<S>> Children<S> for (H, T) {
    type State = (Slot<H::State>, T::State);
    const LEN: usize = 1 + T::LEN;
    const SIZE: usize = H::SIZE + T::SIZE;

    #[inline]
    fn tick(&self, i: usize, at: usize, state: &mut Self::State, ctx: &mut Ctx<'_, S>) -> Status {
        if i == 0 {
            tick_child(&self.0, &mut state.0.node, ctx, at)
        } else {
            self.1.tick(i - 1, at + H::SIZE, &mut state.1, ctx)
        }
    }

    #[inline]
    fn tick_while(
        &self,
        start: usize,
        at: usize,
        go_on: Status,
        state: &mut Self::State,
        ctx: &mut Ctx<'_, S>,
    ) -> Option<(usize, Status)> {
        let rest = if start == 0 {
            let status = tick_child(&self.0, &mut state.0.node, ctx, at);
            if status != go_on {
                return Some((0, status));
            }
            0
        } else {
            start - 1
        };
        self.1
            .tick_while(rest, at + H::SIZE, go_on, &mut state.1, ctx)
            .map(|(i, status)| (i + 1, status))
    }

    #[inline]
    fn halt_except(&self, keep: usize, state: &mut Self::State, ctx: &mut Ctx<'_, S>) {
        if keep != 0 {
            halt_running(&self.0, &mut state.0.node, ctx);
        }
        self.1.halt_except(keep.wrapping_sub(1), &mut state.1, ctx);
    }

    #[inline]
    fn is_running(&self, i: usize, state: &Self::State) -> bool {
        if i == 0 {
            self.0.is_running(&state.0.node)
        } else {
            self.1.is_running(i - 1, &state.1)
        }
    }

    #[inline]
    fn done(&self, i: usize, state: &Self::State) -> Option<Status> {
        if i == 0 {
            state.0.done
        } else {
            self.1.done(i - 1, &state.1)
        }
    }

    #[inline]
    fn set_done(&self, i: usize, state: &mut Self::State, done: Status) {
        if i == 0 {
            state.0.done = Some(done);
        } else {
            self.1.set_done(i - 1, &mut state.1, done);
        }
    }

    #[inline]
    fn clear_done(&self, state: &mut Self::State) {
        state.0.done = None;
        self.1.clear_done(&mut state.1);
    }

    fn visit(&self, state: &Self::State, depth: usize, f: &mut dyn FnMut(Visit<'_>)) {
        self.0.visit(&state.0.node, depth, f);
        self.1.visit(&state.1, depth, f);
    }
}

/// Two lists of children as one: the first's children, then the second's. Generated code joins
/// lists of a few children into a balanced tree of `Join`s, so a composite with thousands of
/// children nests by the logarithm of its width (what rustc and syn can read), not by its width.
#[derive(Debug, Clone, Copy)]
pub struct Join<L, R>(pub L, pub R);

impl<S, L: Children<S>, R: Children<S>> Children<S> for Join<L, R> {
    type State = (L::State, R::State);
    const LEN: usize = L::LEN + R::LEN;
    const SIZE: usize = L::SIZE + R::SIZE;

    #[inline]
    fn tick(&self, i: usize, at: usize, state: &mut Self::State, ctx: &mut Ctx<'_, S>) -> Status {
        if i < L::LEN {
            self.0.tick(i, at, &mut state.0, ctx)
        } else {
            self.1.tick(i - L::LEN, at + L::SIZE, &mut state.1, ctx)
        }
    }

    #[inline]
    fn tick_while(
        &self,
        start: usize,
        at: usize,
        go_on: Status,
        state: &mut Self::State,
        ctx: &mut Ctx<'_, S>,
    ) -> Option<(usize, Status)> {
        if start < L::LEN
            && let Some(stop) = self.0.tick_while(start, at, go_on, &mut state.0, ctx)
        {
            return Some(stop);
        }
        self.1
            .tick_while(
                start.saturating_sub(L::LEN),
                at + L::SIZE,
                go_on,
                &mut state.1,
                ctx,
            )
            .map(|(i, status)| (i + L::LEN, status))
    }

    #[inline]
    fn halt_except(&self, keep: usize, state: &mut Self::State, ctx: &mut Ctx<'_, S>) {
        self.0.halt_except(keep, &mut state.0, ctx);
        // `usize::MAX` (halt all) stays out of range on the right.
        self.1
            .halt_except(keep.wrapping_sub(L::LEN), &mut state.1, ctx);
    }

    #[inline]
    fn is_running(&self, i: usize, state: &Self::State) -> bool {
        if i < L::LEN {
            self.0.is_running(i, &state.0)
        } else {
            self.1.is_running(i - L::LEN, &state.1)
        }
    }

    #[inline]
    fn done(&self, i: usize, state: &Self::State) -> Option<Status> {
        if i < L::LEN {
            self.0.done(i, &state.0)
        } else {
            self.1.done(i - L::LEN, &state.1)
        }
    }

    #[inline]
    fn set_done(&self, i: usize, state: &mut Self::State, done: Status) {
        if i < L::LEN {
            self.0.set_done(i, &mut state.0, done);
        } else {
            self.1.set_done(i - L::LEN, &mut state.1, done);
        }
    }

    #[inline]
    fn clear_done(&self, state: &mut Self::State) {
        self.0.clear_done(&mut state.0);
        self.1.clear_done(&mut state.1);
    }

    fn visit(&self, state: &Self::State, depth: usize, f: &mut dyn FnMut(Visit<'_>)) {
        self.0.visit(&state.0, depth, f);
        self.1.visit(&state.1, depth, f);
    }
}
