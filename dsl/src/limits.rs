//! The compiler's limits, in one place. Each is generous for hand-written agents and keeps every
//! stage (parsing, checks, generation, formatting, rustc on the generated code) bounded in stack
//! and output, so no input can crash or exhaust a build; crossing one is an error at the token
//! where it was crossed, never a crash.

/// How deeply delimiters may nest: `{`, `(`, `[`, `<` and `&` in `.agent` files, `{`, `(` and
/// `[` groups in macro input. Crossing it is `E0005` at the delimiter that opens level 257.
/// Every recursive walk of the compiler stays within this depth.
pub const NESTING: usize = 256;

/// How deeply the generated types of a behaviour tree (its nodes' and its progress') may nest
/// after its subtrees are inlined: rustc checks nested types to a depth of 128 by default
/// (`recursion_limit`), and the generated code must compile without the user raising it. A
/// `sequence` level costs 3 (its state, the list cell, the slot), one more per earlier sibling
/// in the same group of 8 children; a decorator or a subtree costs 1. Crossing it is `E0409`.
/// It also bounds how deeply nodes nest once inlined, so every walk of a tree stays shallow.
pub const TREE_TYPE_DEPTH: usize = 120;

/// How many nodes a behaviour tree may have after its subtrees are inlined (each `subtree` use
/// is a copy). A few lines using a behaviour twice per level would otherwise expand to millions
/// of nodes. Crossing it is `E0410`, naming the chain of behaviours that multiplies.
pub const TREE_NODES: usize = 20_000;

/// Children of a composite are generated as lists of at most this many, joined as a balanced
/// tree, so the generated code nests by the logarithm of the width, not by the width.
pub const CHILDREN_CHUNK: usize = 8;

/// How many diagnostics one file (or one macro invocation) reports; past it, one `E0006` says
/// how many more there were. 100,000 bad routes would otherwise print nearly a gigabyte.
pub const DIAGNOSTICS: usize = 100;

/// How many names a diagnostic lists ("route to `a`, `b` or `c`") before "and N more".
pub const LISTED_NAMES: usize = 16;
