//! Property test: random event sequences (events with random parameters, through the typed and
//! the untyped path, plus timers that may be stale) drive the machine `#[agent]` generated and a
//! small reference interpreter of the compiler's model of the same `transitions` block. After
//! every step both must agree on the state, the FSM position, accepted/rejected (and why), the
//! armed timer and the snapshot.

use std::collections::HashMap;

use agent_dsl::model::{FsmDef, StrategyDef, TerminalKind, Trigger};
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde_json::Value;
use stratagem::prelude::*;
use stratagem::strategy::fsm::TIMEOUT_SIGNAL;
use stratagem::{AgentError, FsmSpec};

/// The machine is written once: the macro gets it, and so does the reference (as text).
macro_rules! machine {
    ($($body:tt)*) => {
        /// A vending machine.
        #[agent(strategy = Fsm, transitions { $($body)* })]
        #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
        struct Vending {
            credit: u32,
            log: Vec<String>,
        }

        const MACHINE: &str = stringify!($($body)*);
    };
}

machine! {
    initial Idle
    terminal Sold
    terminal Broken as failure
    enter Ready do on_ready
    exit Ready do on_leave_ready
    Idle  -> Ready  on coin   do add_coin
    Idle  -> Idle   on nudge
    Ready -> Ready  on coin   if not_full do add_coin
    Ready -> Broken on coin
    Ready -> Sold   on select if enough do vend
    Ready -> Ready  on select if never
    Ready -> Idle   on refund do refund
    Ready -> Idle   after 5s  do refund
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Coin {
    amount: u32,
}

#[derive(Debug, Deserialize)]
struct Selection {
    item: u8,
}

#[action]
fn add_coin(v: &mut Vending, coin: Coin) -> Result<(), ActionError> {
    if coin.amount == 0 {
        return Err(ActionError::new("no coin"));
    }
    v.credit += coin.amount;
    v.log.push(format!("coin {}", coin.amount));
    Ok(())
}

#[action]
fn vend(v: &mut Vending) {
    v.credit -= 2;
    v.log.push("vend".into());
}

#[action]
fn refund(v: &mut Vending) {
    v.credit = 0;
    v.log.push("refund".into());
}

#[action]
fn on_ready(v: &mut Vending) -> Result<(), ActionError> {
    v.log.push("ready".into());
    // Entry fails once the log is long: failing entry actions happen in long runs.
    if v.log.len() > 14 {
        return Err(ActionError::new("log full"));
    }
    Ok(())
}

#[action]
fn on_leave_ready(v: &mut Vending) {
    v.log.push("leave".into());
}

fn not_full(v: &Vending) -> bool {
    v.credit < 3
}

fn enough(v: &Vending, selection: Selection) -> bool {
    v.credit >= 2 && selection.item < 3
}

fn never(_: &Vending) -> bool {
    false
}

// ---- the reference interpreter ------------------------------------------------------------

type Guard = fn(&Vending, &Value) -> Result<bool, ()>;
type Act = fn(&mut Vending, &Value) -> Result<(), ()>;

fn decode<P: DeserializeOwned>(params: &Value) -> Result<P, ()> {
    let params = if params.is_null() {
        Value::Object(Default::default())
    } else {
        params.clone()
    };
    serde_json::from_value(params).map_err(|_| ())
}

/// The user's guards and actions, by the names the model uses.
fn guards() -> HashMap<&'static str, Guard> {
    let mut g: HashMap<&'static str, Guard> = HashMap::new();
    g.insert("not_full", |v, _| Ok(not_full(v)));
    g.insert("enough", |v, p| {
        decode::<Selection>(p).map(|s| enough(v, s))
    });
    g.insert("never", |v, _| Ok(never(v)));
    g
}

fn actions() -> HashMap<&'static str, Act> {
    let mut a: HashMap<&'static str, Act> = HashMap::new();
    a.insert("add_coin", |v, p| {
        let coin = decode::<Coin>(p)?;
        add_coin(v, coin).map_err(|_| ())
    });
    a.insert("vend", |v, _| {
        vend(v);
        Ok(())
    });
    a.insert("refund", |v, _| {
        refund(v);
        Ok(())
    });
    a.insert("on_ready", |v, _| on_ready(v).map_err(|_| ()));
    a.insert("on_leave_ready", |v, _| {
        on_leave_ready(v);
        Ok(())
    });
    a
}

/// What a step did, in terms both sides can produce.
#[derive(Debug, Clone, PartialEq)]
enum Verdict {
    /// A row fired; `Some` when the target armed a timer: (delay ms, state, generation).
    Fired(Option<(u128, String, u64)>),
    /// A stale timer: nothing happened.
    Ignored,
    Invalid,
    Rejected(Vec<String>),
    /// This action (or guard) failed.
    Failed(String),
}

struct Reference {
    fsm: FsmDef,
    guards: HashMap<&'static str, Guard>,
    actions: HashMap<&'static str, Act>,
    state: String,
    data: Vending,
    generation: u64,
    started: bool,
}

fn path_name(path: &syn::Path) -> String {
    path.segments.last().unwrap().ident.to_string()
}

impl Reference {
    fn new() -> Self {
        let attr: proc_macro2::TokenStream = format!("strategy = Fsm, transitions {{ {MACHINE} }}")
            .parse()
            .unwrap();
        let item: syn::Item = syn::parse_str("struct Vending;").unwrap();
        let def = agent_dsl::tokens::agent(attr, &item).unwrap();
        agent_dsl::check::agent(&def).expect("the machine is valid");
        let Some(StrategyDef::Fsm(fsm)) = def.strategy.get() else {
            panic!("not an FSM")
        };
        let state = fsm.initial_state().unwrap().value.clone();
        Reference {
            fsm: fsm.clone(),
            guards: guards(),
            actions: actions(),
            state,
            data: Vending::default(),
            generation: 0,
            started: false,
        }
    }

    fn event(&mut self, event: &str, params: &Value) -> Verdict {
        let rows: Vec<_> = self
            .fsm
            .rows
            .iter()
            .filter(|r| {
                r.from.value == self.state
                    && matches!(&r.trigger, Trigger::Event(e) if e.value == event)
            })
            .cloned()
            .collect();
        self.try_rows(&rows, params, true)
    }

    fn timer(&mut self, state: &str, generation: u64) -> Verdict {
        if state != self.state || generation != self.generation {
            return Verdict::Ignored;
        }
        let rows: Vec<_> = self
            .fsm
            .rows
            .iter()
            .filter(|r| r.from.value == self.state && matches!(r.trigger, Trigger::After(_)))
            .cloned()
            .collect();
        self.try_rows(&rows, &Value::Null, false)
    }

    fn try_rows(
        &mut self,
        rows: &[agent_dsl::model::RowDef],
        params: &Value,
        is_event: bool,
    ) -> Verdict {
        if rows.is_empty() {
            return if is_event {
                Verdict::Invalid
            } else {
                Verdict::Ignored
            };
        }
        let mut tried = Vec::new();
        for row in rows {
            if let Some(guard) = &row.guard {
                let name = path_name(&guard.value);
                match self.guards[name.as_str()](&self.data, params) {
                    Ok(true) => {}
                    Ok(false) => {
                        tried.push(name);
                        continue;
                    }
                    Err(()) => return Verdict::Failed(name),
                }
            }
            return self.fire(row, params);
        }
        Verdict::Rejected(tried)
    }

    fn fire(&mut self, row: &agent_dsl::model::RowDef, params: &Value) -> Verdict {
        use agent_dsl::model::HookKind;
        let mut draft = self.data.clone();
        let steps = [
            self.fsm
                .hook(HookKind::Exit, &self.state)
                .map(|h| (path_name(&h.action.value), Value::Null)),
            row.action
                .as_ref()
                .map(|a| (path_name(&a.value), params.clone())),
            self.fsm
                .hook(HookKind::Enter, &row.to.value)
                .map(|h| (path_name(&h.action.value), Value::Null)),
        ];
        for (name, params) in steps.into_iter().flatten() {
            if self.actions[name.as_str()](&mut draft, &params).is_err() {
                return Verdict::Failed(name);
            }
        }
        self.data = draft;
        self.state = row.to.value.clone();
        self.generation += 1;
        self.started = true;
        Verdict::Fired(self.armed())
    }

    fn armed(&self) -> Option<(u128, String, u64)> {
        self.fsm
            .timer(&self.state)
            .and_then(|row| match &row.trigger {
                Trigger::After(d) => {
                    Some((u128::from(d.value.0), self.state.clone(), self.generation))
                }
                Trigger::Event(_) | Trigger::Done(_) => None,
            })
    }

    fn status(&self) -> Status {
        match self.fsm.terminal(&self.state) {
            Some(TerminalKind::Success) => Status::Success,
            Some(TerminalKind::Failure) => Status::Failure,
            None if self.started => Status::Waiting,
            None => Status::Idle,
        }
    }
}

// ---- the generated machine, seen the same way ----------------------------------------------

/// The verdict, and the timer signal the step armed (kept to be delivered later).
fn verdict_of(result: Result<Vec<Directive>, AgentError>) -> (Verdict, Option<Signal>) {
    match result {
        Ok(directives) => match directives.as_slice() {
            [] => (Verdict::Fired(None), None),
            [Directive::Schedule { delay, signal }] => (
                Verdict::Fired(Some((
                    delay.as_millis(),
                    signal.data["state"].as_str().unwrap().to_string(),
                    signal.data["generation"].as_u64().unwrap(),
                ))),
                Some(signal.clone()),
            ),
            other => panic!("unexpected directives {other:?}"),
        },
        Err(AgentError::InvalidTransition { .. }) => (Verdict::Invalid, None),
        Err(AgentError::GuardRejected { guards, .. }) => (
            Verdict::Rejected(guards.iter().map(|g| g.to_string()).collect()),
            None,
        ),
        Err(AgentError::Action { action, .. }) => (Verdict::Failed(action.into_owned()), None),
        Err(AgentError::GuardFailed { guard, .. }) => (Verdict::Failed(guard.into_owned()), None),
        Err(other) => panic!("unexpected error {other:?}"),
    }
}

/// The untyped path returns directives only: an error is one `Error` directive.
fn untyped(directives: Vec<Directive>) -> Result<Vec<Directive>, AgentError> {
    match directives.as_slice() {
        [Directive::Error { error, .. }] => Err(error.clone()),
        _ => Ok(directives),
    }
}

#[derive(Debug, Clone)]
enum Step {
    Event {
        name: &'static str,
        params: Value,
        typed: bool,
    },
    /// Deliver the timer armed this many arms ago (0 = the latest), which may be stale.
    Timer(usize),
}

fn params() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        Just(serde_json::json!({})),
        (0u32..3).prop_map(|amount| serde_json::json!({ "amount": amount })),
        (0u8..5).prop_map(|item| serde_json::json!({ "item": item })),
        Just(serde_json::json!({"amount": "many"})),
        Just(serde_json::json!({"item": "cola"})),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (
            prop::sample::select(vec!["coin", "nudge", "select", "refund"]),
            params(),
            any::<bool>()
        )
            .prop_map(|(name, params, typed)| Step::Event { name, params, typed }),
        1 => (0usize..3).prop_map(Step::Timer),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn the_generated_machine_agrees_with_the_model(steps in prop::collection::vec(step(), 1..40)) {
        let mut agent = Vending::new();
        let mut reference = Reference::new();
        prop_assert!(agent.init().is_empty(), "the initial state arms no timer");
        let mut timers: Vec<Signal> = Vec::new();

        for step in steps {
            let (got, want) = match &step {
                Step::Event { name, params, typed } => {
                    let result = if *typed {
                        let event = <Vending as FsmSpec>::event(name).unwrap();
                        // The typed error, as a signal's refusal reports it.
                        agent.cmd(event.with(params.clone())).map(Vec::from).map_err(AgentError::from)
                    } else {
                        untyped(agent.cmd(Instruction::new(*name, params.clone())))
                    };
                    (verdict_of(result), reference.event(name, params))
                }
                Step::Timer(back) => {
                    let Some(signal) = timers.iter().rev().nth(*back).cloned() else {
                        continue;
                    };
                    prop_assert_eq!(&signal.signal_type, TIMEOUT_SIGNAL);
                    let directives = agent.handle_signal(&signal);
                    let got = if directives.is_empty() && reference_is_stale(&reference, &signal) {
                        (Verdict::Ignored, None)
                    } else {
                        verdict_of(untyped(directives))
                    };
                    let want = reference.timer(
                        signal.data["state"].as_str().unwrap(),
                        signal.data["generation"].as_u64().unwrap(),
                    );
                    (got, want)
                }
            };
            let (got, armed) = got;
            prop_assert_eq!(&got, &want, "step {:?}", step);
            timers.extend(armed);
            prop_assert_eq!(agent.fsm_state().name(), reference.state.as_str());
            prop_assert_eq!(agent.state(), &reference.data);
            prop_assert_eq!(agent.strategy_state().generation, reference.generation);
            prop_assert_eq!(agent.snapshot().status, reference.status());
        }
    }
}

/// Whether the reference will call this timer stale: then the generated machine must have done
/// nothing at all.
fn reference_is_stale(reference: &Reference, signal: &Signal) -> bool {
    signal.data["state"].as_str() != Some(reference.state.as_str())
        || signal.data["generation"].as_u64() != Some(reference.generation)
}
