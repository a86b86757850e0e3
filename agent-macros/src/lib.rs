//! Procedural macros of Stratagem. A thin shim: every entry point forwards to `agent-dsl`, which
//! parses, checks and generates; nothing is validated or generated here.

#![forbid(unsafe_code)]

use proc_macro::TokenStream;

/// Defines an agent on its state struct.
///
/// ```ignore
/// #[agent(strategy = Direct, actions [add], routes { "counter.add" => add })]
/// #[derive(Debug, Clone, Default, Serialize, Deserialize)]
/// struct Counter { value: i64 }
/// ```
///
/// Options: `strategy = Direct | Fsm | BehaviorTree | React | ChainOfThought | ChainOfDraft |
/// custom(Path)`, `transitions { ... }` (the FSM's `initial`, `terminal`, `enter`/`exit` and
/// rows), `tree = Behavior` or `tree = { node }` (the behaviour tree), `description = "..."`,
/// `actions [paths]`, `routes { "pattern" => target [priority N] ... }`, `tick = 100ms`,
/// `crate = path`, and for the AI strategies `model`, `system`, `tools`, `max_iterations`,
/// `temperature`, `max_tokens`, `hooks`; `migrate "<fingerprint>" { ... }` and
/// `lock = "agents.lock"` for checkpoints across builds. The guide's `agents` chapter
/// (`stratagem::guide::agents`) explains each; `stratagem::guide` has the whole language.
#[proc_macro_attribute]
pub fn agent(attr: TokenStream, item: TokenStream) -> TokenStream {
    agent_dsl::expand::agent(attr.into(), item.into()).into()
}

/// A behaviour tree, in the tree syntax of `.agent` files.
///
/// ```ignore
/// // An expression: a tree value to tick with `bt::TreeRun`.
/// let patrol = bt! { reactive_sequence { condition battery_ok  action pick_target } };
///
/// // Items: one type per behaviour, for `#[agent(strategy = BehaviorTree, tree = Patrol)]`.
/// bt! {
///     for Sentry
///     pub behavior Patrol { sequence { condition battery_ok  subtree Report } }
///     behavior Report { action report }
/// }
/// ```
///
/// A root tree may be followed by `behavior Name { ... }` items its `subtree` leaves name;
/// `crate = path;` first sets where the runtime is found.
#[proc_macro]
pub fn bt(input: TokenStream) -> TokenStream {
    agent_dsl::expand::bt(input.into()).into()
}

/// Turns a function into an action.
///
/// ```ignore
/// #[action(description = "Add to the counter")]
/// fn add(counter: &mut Counter, params: AddParams) -> Result<(), ActionError> { ... }
/// ```
///
/// Options: `description = "..."` (defaults to the doc comment), and for `async fn` actions
/// `timeout`, `max_retries`, `backoff`, `backoff_cap`; `crate = path`.
#[proc_macro_attribute]
pub fn action(attr: TokenStream, item: TokenStream) -> TokenStream {
    agent_dsl::expand::action(attr.into(), item.into()).into()
}

/// Describes an action's parameter struct to behaviour trees, so the arguments a tree gives
/// (`action move_to(speed = 2)`) are checked against its fields when the crate compiles: a
/// misspelt name, a value of the wrong type or a missing argument is a compile error at the
/// tree. Derive it next to `Deserialize` and `JsonSchema`.
///
/// ```ignore
/// #[derive(Debug, Deserialize, JsonSchema, Params)]
/// struct Move { speed: u8, mode: Option<String> }
/// ```
///
/// It reads serde's `rename`, `rename_all`, `alias`, `default`, `skip` and `flatten`;
/// `#[params(crate = path)]` sets where the runtime is found.
#[proc_macro_derive(Params, attributes(params))]
pub fn params(item: TokenStream) -> TokenStream {
    agent_dsl::expand::params(item.into()).into()
}
