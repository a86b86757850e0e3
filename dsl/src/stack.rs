//! A stack that fits the nesting limit. The parsers (pest, syn, prettyplease) recurse once or
//! more per level, and a test's or a tool's worker thread may have as little as 2 MB; so the
//! pipeline runs on a stack sized for [`NESTING`](crate::limits::NESTING) levels, whatever
//! thread calls it (rustc grows its own stack the same way, with the same crate).

/// Below this much free stack, a new stack is taken.
const RED_ZONE: usize = 32 << 20;

/// The stack taken then: enough for every stage at the nesting limit in a debug build, with a
/// wide margin. It is address space; only what is used is committed.
const STACK: usize = 128 << 20;

/// Runs `f` with at least [`RED_ZONE`] bytes of stack.
pub(crate) fn with_stack<T>(f: impl FnOnce() -> T) -> T {
    stacker::maybe_grow(RED_ZONE, STACK, f)
}
