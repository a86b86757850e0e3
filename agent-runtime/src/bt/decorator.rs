//! Decorators: one child, its status transformed, repeated, or bounded in time.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Ctx, Node, NodeKind, Status, Visit, halt_running, tick_node};

macro_rules! mapping {
    ($(#[$doc:meta])* $name:ident, $kind:expr, |$s:ident| $map:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default)]
        pub struct $name<N> {
            child: N,
        }

        impl<N> $name<N> {
            /// The decorator over `child`.
            pub const fn new(child: N) -> Self {
                $name { child }
            }
        }

        impl<S, N: Node<S>> Node<S> for $name<N> {
            type State = N::State;
            const SIZE: usize = 1 + N::SIZE;

            #[inline]
            fn tick(&self, state: &mut Self::State, ctx: &mut Ctx<'_, S>) -> Status {
                let $s = tick_node(&self.child, state, ctx);
                $map
            }

            #[inline]
            fn halt(&self, state: &mut Self::State, ctx: &mut Ctx<'_, S>) {
                halt_running(&self.child, state, ctx)
            }

            #[inline]
            fn is_running(&self, state: &Self::State) -> bool {
                self.child.is_running(state)
            }

            fn kind(&self) -> NodeKind<'_> {
                $kind
            }

            fn visit(&self, state: &Self::State, depth: usize, f: &mut dyn FnMut(Visit<'_>)) {
                f(Visit { depth, kind: $kind, running: self.child.is_running(state) });
                self.child.visit(state, depth + 1, f);
            }
        }
    };
}

mapping!(
    /// `invert`: success becomes failure and failure success.
    Invert, NodeKind::Invert, |s| match s {
        Status::Success => Status::Failure,
        Status::Failure => Status::Success,
        Status::Running => Status::Running,
    }
);
mapping!(
    /// `force_success`: a completed child is a success.
    ForceSuccess, NodeKind::ForceSuccess, |s| if s == Status::Running { s } else { Status::Success }
);
mapping!(
    /// `force_failure`: a completed child is a failure.
    ForceFailure, NodeKind::ForceFailure, |s| if s == Status::Running { s } else { Status::Failure }
);

/// `subtree Name`: a named behaviour inlined into its parent. It ticks its child unchanged; the
/// name shows in progress displays.
#[derive(Debug, Clone, Copy, Default)]
pub struct Subtree<N> {
    name: &'static str,
    child: N,
}

impl<N> Subtree<N> {
    /// The behaviour `name`, whose tree is `child`.
    pub const fn new(name: &'static str, child: N) -> Self {
        Subtree { name, child }
    }
}

impl<S, N: Node<S>> Node<S> for Subtree<N> {
    type State = N::State;
    const SIZE: usize = 1 + N::SIZE;

    #[inline]
    fn tick(&self, state: &mut Self::State, ctx: &mut Ctx<'_, S>) -> Status {
        tick_node(&self.child, state, ctx)
    }

    #[inline]
    fn halt(&self, state: &mut Self::State, ctx: &mut Ctx<'_, S>) {
        halt_running(&self.child, state, ctx)
    }

    #[inline]
    fn is_running(&self, state: &Self::State) -> bool {
        self.child.is_running(state)
    }

    fn kind(&self) -> NodeKind<'_> {
        NodeKind::Subtree(self.name)
    }

    fn visit(&self, state: &Self::State, depth: usize, f: &mut dyn FnMut(Visit<'_>)) {
        f(Visit {
            depth,
            kind: NodeKind::Subtree(self.name),
            running: self.child.is_running(state),
        });
        self.child.visit(state, depth + 1, f);
    }
}

/// Progress of `repeat` and `retry`: completed runs (or failed attempts) in this activation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CountState<T> {
    /// Successful runs (`repeat`) or failed attempts (`retry`) so far.
    pub count: u32,
    /// The child's progress.
    pub child: T,
}

macro_rules! counting {
    ($(#[$doc:meta])* $name:ident, $kind:ident, again = $again:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default)]
        pub struct $name<N> {
            times: u32,
            child: N,
        }

        impl<N> $name<N> {
            /// The decorator over `child`. The compiler rejects 0; built by hand, 0 acts as 1.
            pub const fn new(times: u32, child: N) -> Self {
                $name { times: if times == 0 { 1 } else { times }, child }
            }
        }

        impl<S, N: Node<S>> Node<S> for $name<N> {
            type State = CountState<N::State>;
            const SIZE: usize = 1 + N::SIZE;

            #[inline]
            fn tick(&self, state: &mut Self::State, ctx: &mut Ctx<'_, S>) -> Status {
                // A child that completes at once is ticked again within this tick.
                loop {
                    match tick_node(&self.child, &mut state.child, ctx) {
                        Status::Running => return Status::Running,
                        status if status == $again => {
                            state.count += 1;
                            if state.count >= self.times {
                                state.count = 0;
                                return status;
                            }
                        }
                        decided => {
                            state.count = 0;
                            return decided;
                        }
                    }
                }
            }

            #[inline]
            fn halt(&self, state: &mut Self::State, ctx: &mut Ctx<'_, S>) {
                if self.child.is_running(&state.child) {
                    halt_running(&self.child, &mut state.child, ctx);
                    state.count = 0;
                }
            }

            #[inline]
            fn is_running(&self, state: &Self::State) -> bool {
                self.child.is_running(&state.child)
            }

            fn kind(&self) -> NodeKind<'_> {
                NodeKind::$kind(self.times)
            }

            fn visit(&self, state: &Self::State, depth: usize, f: &mut dyn FnMut(Visit<'_>)) {
                f(Visit { depth, kind: NodeKind::$kind(self.times), running: self.is_running(state) });
                self.child.visit(&state.child, depth + 1, f);
            }
        }
    };
}

counting!(
    /// `repeat(N)`: runs its child until it has succeeded N times in total; a failure fails it.
    Repeat, Repeat, again = Status::Success
);
counting!(
    /// `retry(N)`: makes up to N attempts in total; a success succeeds, the N-th failure fails
    /// (so `retry(1)` never retries).
    Retry, Retry, again = Status::Failure
);

/// Progress of `timeout` and `delay`: when the current activation started.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TimerState<T> {
    /// The clock reading at the activation's first tick; `None` when not active.
    pub since: Option<Duration>,
    /// The child's progress.
    pub child: T,
}

/// `timeout(D)`: ticks its child; on a tick at which D has elapsed since the activation's first
/// tick, halts the child and fails without ticking it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Timeout<N> {
    after: Duration,
    child: N,
}

impl<N> Timeout<N> {
    /// The decorator over `child`.
    pub const fn new(after: Duration, child: N) -> Self {
        Timeout { after, child }
    }
}

impl<S, N: Node<S>> Node<S> for Timeout<N> {
    type State = TimerState<N::State>;
    const SIZE: usize = 1 + N::SIZE;

    #[inline]
    fn tick(&self, state: &mut Self::State, ctx: &mut Ctx<'_, S>) -> Status {
        let since = *state.since.get_or_insert(ctx.now());
        if ctx.now().saturating_sub(since) >= self.after {
            halt_running(&self.child, &mut state.child, ctx);
            state.since = None;
            return Status::Failure;
        }
        let status = tick_node(&self.child, &mut state.child, ctx);
        if status.is_done() {
            state.since = None;
        }
        status
    }

    #[inline]
    fn halt(&self, state: &mut Self::State, ctx: &mut Ctx<'_, S>) {
        if state.since.is_some() {
            halt_running(&self.child, &mut state.child, ctx);
            state.since = None;
        }
    }

    #[inline]
    fn is_running(&self, state: &Self::State) -> bool {
        state.since.is_some()
    }

    fn kind(&self) -> NodeKind<'_> {
        NodeKind::Timeout(self.after)
    }

    fn visit(&self, state: &Self::State, depth: usize, f: &mut dyn FnMut(Visit<'_>)) {
        f(Visit {
            depth,
            kind: NodeKind::Timeout(self.after),
            running: self.is_running(state),
        });
        self.child.visit(&state.child, depth + 1, f);
    }
}

/// `delay(D)`: `Running` without ticking its child until D has elapsed since the activation's
/// first tick; then ticks the child in that same tick, and on until it completes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Delay<N> {
    after: Duration,
    child: N,
}

impl<N> Delay<N> {
    /// The decorator over `child`.
    pub const fn new(after: Duration, child: N) -> Self {
        Delay { after, child }
    }
}

impl<S, N: Node<S>> Node<S> for Delay<N> {
    type State = TimerState<N::State>;
    const SIZE: usize = 1 + N::SIZE;

    #[inline]
    fn tick(&self, state: &mut Self::State, ctx: &mut Ctx<'_, S>) -> Status {
        let since = *state.since.get_or_insert(ctx.now());
        if ctx.now().saturating_sub(since) < self.after {
            return Status::Running;
        }
        let status = tick_node(&self.child, &mut state.child, ctx);
        if status.is_done() {
            state.since = None;
        }
        status
    }

    #[inline]
    fn halt(&self, state: &mut Self::State, ctx: &mut Ctx<'_, S>) {
        if state.since.is_some() {
            halt_running(&self.child, &mut state.child, ctx);
            state.since = None;
        }
    }

    #[inline]
    fn is_running(&self, state: &Self::State) -> bool {
        state.since.is_some()
    }

    fn kind(&self) -> NodeKind<'_> {
        NodeKind::Delay(self.after)
    }

    fn visit(&self, state: &Self::State, depth: usize, f: &mut dyn FnMut(Visit<'_>)) {
        f(Visit {
            depth,
            kind: NodeKind::Delay(self.after),
            running: self.is_running(state),
        });
        self.child.visit(&state.child, depth + 1, f);
    }
}

/// Progress of `run_once`: the status of its completed run, if any.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunOnceState<T> {
    /// How the one run ended.
    pub done: Option<Status>,
    /// The child's progress.
    pub child: T,
}

/// `run_once`: after one completed run, returns that run's status without ticking the child
/// again. A halted, unfinished run does not count.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunOnce<N> {
    child: N,
}

impl<N> RunOnce<N> {
    /// The decorator over `child`.
    pub const fn new(child: N) -> Self {
        RunOnce { child }
    }
}

impl<S, N: Node<S>> Node<S> for RunOnce<N> {
    type State = RunOnceState<N::State>;
    const SIZE: usize = 1 + N::SIZE;

    #[inline]
    fn tick(&self, state: &mut Self::State, ctx: &mut Ctx<'_, S>) -> Status {
        if let Some(done) = state.done {
            return done;
        }
        let status = tick_node(&self.child, &mut state.child, ctx);
        if status.is_done() {
            state.done = Some(status);
        }
        status
    }

    #[inline]
    fn halt(&self, state: &mut Self::State, ctx: &mut Ctx<'_, S>) {
        halt_running(&self.child, &mut state.child, ctx)
    }

    #[inline]
    fn is_running(&self, state: &Self::State) -> bool {
        self.child.is_running(&state.child)
    }

    fn kind(&self) -> NodeKind<'_> {
        NodeKind::RunOnce
    }

    fn visit(&self, state: &Self::State, depth: usize, f: &mut dyn FnMut(Visit<'_>)) {
        f(Visit {
            depth,
            kind: NodeKind::RunOnce,
            running: self.is_running(state),
        });
        self.child.visit(&state.child, depth + 1, f);
    }
}
