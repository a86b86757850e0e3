//! Composites: sequences, selectors (with memory and reactive) and parallel.

use serde::{Deserialize, Serialize};

use super::{Children, Ctx, Node, NodeKind, Status, Visit};

/// Halt every child (`usize::MAX` is never a child index).
const ALL: usize = usize::MAX;

/// Progress of a sequence or selector.
///
/// A node with memory (`sequence`, `selector`) runs exactly when the child at `current` does,
/// so that is not stored: its `running` stays `false`, and a tick writes one field fewer per
/// such node. A reactive node keeps `running`: it does not remember which child runs, and
/// asking every child would walk its whole subtree each time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CompositeState<C> {
    /// Whether a reactive node is running. Always `false` for a node with memory (ignored when
    /// restored), which asks the child at `current` instead.
    pub running: bool,
    /// The child to resume at (always 0 for reactive nodes).
    pub current: usize,
    /// The children's progress.
    pub children: C,
}

/// Ticks children in order from the remembered one; `go_on` is the status that moves to the
/// next child (`Success` for a sequence, `Failure` for a selector), anything else decides.
#[inline]
fn tick_with_memory<S, C: Children<S>>(
    children: &C,
    state: &mut CompositeState<C::State>,
    ctx: &mut Ctx<'_, S>,
    go_on: Status,
) -> Status {
    match children.tick_while(state.current, 1, go_on, &mut state.children, ctx) {
        Some((i, Status::Running)) => {
            state.current = i;
            Status::Running
        }
        Some((_, decided)) => {
            state.current = 0;
            decided
        }
        None => {
            state.current = 0;
            go_on
        }
    }
}

/// Ticks every child from the first each tick; a `Running` child halts every other running one,
/// a deciding child halts the running later ones.
#[inline]
fn tick_reactive<S, C: Children<S>>(
    children: &C,
    state: &mut CompositeState<C::State>,
    ctx: &mut Ctx<'_, S>,
    go_on: Status,
) -> Status {
    match children.tick_while(0, 1, go_on, &mut state.children, ctx) {
        Some((i, Status::Running)) => {
            children.halt_except(i, &mut state.children, ctx);
            state.running = true;
            Status::Running
        }
        Some((_, decided)) => {
            children.halt_except(ALL, &mut state.children, ctx);
            state.running = false;
            decided
        }
        None => {
            state.running = false;
            go_on
        }
    }
}

/// Halts a sequence or selector with memory: the running child, if any, is at `current`
/// (`halt_except` asks each child, so only it halts).
#[inline]
fn halt_with_memory<S, C: Children<S>>(
    children: &C,
    state: &mut CompositeState<C::State>,
    ctx: &mut Ctx<'_, S>,
) {
    children.halt_except(ALL, &mut state.children, ctx);
    state.current = 0;
}

#[inline]
fn halt_reactive<S, C: Children<S>>(
    children: &C,
    state: &mut CompositeState<C::State>,
    ctx: &mut Ctx<'_, S>,
) {
    if !state.running {
        return;
    }
    children.halt_except(ALL, &mut state.children, ctx);
    state.running = false;
}

/// Whether a sequence or selector with memory runs: the child it resumes at does.
#[inline]
fn running_with_memory<S, C: Children<S>>(children: &C, state: &CompositeState<C::State>) -> bool {
    children.is_running(state.current, &state.children)
}

/// Whether a reactive node runs: its own flag.
#[inline]
fn running_reactive<S, C: Children<S>>(_: &C, state: &CompositeState<C::State>) -> bool {
    state.running
}

macro_rules! composite {
    (
        $(#[$doc:meta])* $name:ident, $tick:ident, $halt:ident, $running:ident, $go_on:expr,
        $kind:expr
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default)]
        pub struct $name<C> {
            children: C,
        }

        impl<C> $name<C> {
            /// A node over these children (a cons list, see [`nodes!`](crate::nodes)).
            pub const fn new(children: C) -> Self {
                $name { children }
            }
        }

        impl<S, C: Children<S>> Node<S> for $name<C> {
            type State = CompositeState<C::State>;
            const SIZE: usize = 1 + C::SIZE;

            #[inline]
            fn tick(&self, state: &mut Self::State, ctx: &mut Ctx<'_, S>) -> Status {
                $tick(&self.children, state, ctx, $go_on)
            }

            #[inline]
            fn halt(&self, state: &mut Self::State, ctx: &mut Ctx<'_, S>) {
                $halt(&self.children, state, ctx)
            }

            #[inline]
            fn is_running(&self, state: &Self::State) -> bool {
                $running(&self.children, state)
            }

            fn kind(&self) -> NodeKind<'_> {
                $kind
            }

            fn visit(&self, state: &Self::State, depth: usize, f: &mut dyn FnMut(Visit<'_>)) {
                f(Visit { depth, kind: $kind, running: $running(&self.children, state) });
                self.children.visit(&state.children, depth + 1, f);
            }
        }
    };
}

composite!(
    /// `sequence`: ticks children in order until one fails; remembers the running child and
    /// resumes there on the next tick (earlier children are not ticked again).
    Sequence, tick_with_memory, halt_with_memory, running_with_memory,
    Status::Success, NodeKind::Sequence
);
composite!(
    /// `reactive_sequence`: ticks children from the first every tick, so earlier conditions are
    /// re-checked; one failing halts a running later child.
    ReactiveSequence, tick_reactive, halt_reactive, running_reactive,
    Status::Success, NodeKind::ReactiveSequence
);
composite!(
    /// `selector` (fallback): ticks children in order until one succeeds; remembers the running
    /// child.
    Selector, tick_with_memory, halt_with_memory, running_with_memory,
    Status::Failure, NodeKind::Selector
);
composite!(
    /// `reactive_selector`: ticks children from the first every tick; an earlier child that
    /// succeeds or runs halts a running later child.
    ReactiveSelector, tick_reactive, halt_reactive, running_reactive,
    Status::Failure, NodeKind::ReactiveSelector
);

/// `parallel(success = N, failure = M)`: ticks every unfinished child each tick, in order, and
/// decides as soon as N children succeeded (success), M failed, or N successes can no longer be
/// reached (failure); then it halts the running children and the rest are not ticked.
#[derive(Debug, Clone, Copy, Default)]
pub struct Parallel<C> {
    success: usize,
    failure: usize,
    children: C,
}

impl<C> Parallel<C> {
    /// A parallel node. The compiler rejects thresholds of 0 or above the child count; built by
    /// hand, they act as if clamped into `1..=children`.
    pub const fn new(success: usize, failure: usize, children: C) -> Self {
        Parallel {
            success,
            failure,
            children,
        }
    }

    fn thresholds<S>(&self) -> (usize, usize)
    where
        C: Children<S>,
    {
        let clamp = |n: usize| n.clamp(1, C::LEN.max(1));
        (clamp(self.success), clamp(self.failure))
    }
}

/// Progress of a parallel node; which children completed is in their [`Slot`](super::Slot)s.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ParallelState<C> {
    /// Whether the node is running.
    pub running: bool,
    /// Children that succeeded in this activation.
    pub successes: usize,
    /// Children that failed in this activation.
    pub failures: usize,
    /// The children's progress.
    pub children: C,
}

impl<C> Parallel<C> {
    fn finish<S>(&self, state: &mut ParallelState<C::State>, ctx: &mut Ctx<'_, S>)
    where
        C: Children<S>,
    {
        self.children.halt_except(ALL, &mut state.children, ctx);
        self.children.clear_done(&mut state.children);
        state.successes = 0;
        state.failures = 0;
        state.running = false;
    }
}

impl<S, C: Children<S>> Node<S> for Parallel<C> {
    type State = ParallelState<C::State>;
    const SIZE: usize = 1 + C::SIZE;

    #[inline]
    fn tick(&self, state: &mut Self::State, ctx: &mut Ctx<'_, S>) -> Status {
        let (success, failure) = self.thresholds::<S>();
        for i in 0..C::LEN {
            if self.children.done(i, &state.children).is_some() {
                continue;
            }
            match self.children.tick(i, 1, &mut state.children, ctx) {
                Status::Running => continue,
                done => {
                    self.children.set_done(i, &mut state.children, done);
                    if done == Status::Success {
                        state.successes += 1;
                    } else {
                        state.failures += 1;
                    }
                }
            }
            if state.successes >= success {
                self.finish(state, ctx);
                return Status::Success;
            }
            if state.failures >= failure || C::LEN - state.failures < success {
                self.finish(state, ctx);
                return Status::Failure;
            }
        }
        state.running = true;
        Status::Running
    }

    #[inline]
    fn halt(&self, state: &mut Self::State, ctx: &mut Ctx<'_, S>) {
        if state.running {
            self.finish(state, ctx);
        }
    }

    #[inline]
    fn is_running(&self, state: &Self::State) -> bool {
        state.running
    }

    fn kind(&self) -> NodeKind<'_> {
        let (success, failure) = self.thresholds::<S>();
        NodeKind::Parallel { success, failure }
    }

    fn visit(&self, state: &Self::State, depth: usize, f: &mut dyn FnMut(Visit<'_>)) {
        let (success, failure) = self.thresholds::<S>();
        f(Visit {
            depth,
            kind: NodeKind::Parallel { success, failure },
            running: state.running,
        });
        self.children.visit(&state.children, depth + 1, f);
    }
}
