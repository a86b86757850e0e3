//! Property test: random events and timers (possibly stale) drive the statechart `#[agent]`
//! generated and a small reference interpreter of the compiler's model of the same
//! `transitions` block, written from SCXML's algorithm (innermost-first selection, exit and
//! entry through the transition's domain, local rows, shallow and deep history, a parent's
//! timer). After every step both must agree on the leaf, the data (whose log records every
//! action in order), accepted or refused, and the timers armed. Parallel regions, final
//! states and `done` have their own model test, `statechart_regions_model.rs`.
//!
//! CI runs 256 cases; `AGENT_FUZZ_CASES` sets how many.

use std::collections::HashMap;

use agent_dsl::model::{FsmDef, HookKind, RowDef, StrategyDef, Trigger};
use proptest::prelude::*;
use stratagem::prelude::*;
use stratagem::strategy::fsm::TIMEOUT_SIGNAL;
use stratagem::{AgentError, FsmSpec};

#[path = "support/verdicts.rs"]
mod verdicts;

use verdicts::{Verdict, action_name, verdict_of};

macro_rules! machine {
    ($($body:tt)*) => {
        /// A washing machine.
        #[agent(strategy = Fsm, transitions { $($body)* })]
        #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
        struct Washer {
            ok: bool,
            log: Vec<String>,
        }

        const MACHINE: &str = stringify!($($body)*);
    };
}

machine! {
    initial Idle
    terminal Done
    enter Running do enter_running
    exit Running do exit_running
    enter Wash do enter_wash
    exit Wash do exit_wash
    enter Rinse do enter_rinse
    exit Rinse do exit_rinse
    enter Drain do enter_drain
    exit Soak do exit_soak
    Idle -> Running on start
    Idle -> Resume on resume
    Paused -> Resume on resume
    Paused -> Back on back
    Paused -> Done on finish
    state Running {
        initial Wash
        history deep Resume
        history Back
        Running -> Paused on pause
        Running -> Idle after 5s
        Running -> local Wash on again
        Running -> Running on restart
        Running on flip do flip
        Wash -> Rinse on next if ok
        Wash -> Spin on next
        Spin -> Wash on next
        Spin -> Idle on stop
        state Rinse {
            initial Soak
            Rinse -> Wash after 2s
            Rinse -> Spin on skip
            Soak -> Drain on next
            Drain -> Soak on next if ok
            Drain on flip do flip
        }
    }
}

macro_rules! loggers {
    ($($name:ident),*) => {
        $(
            #[action]
            fn $name(w: &mut Washer) {
                w.log.push(stringify!($name).into());
            }
        )*
    };
}

loggers!(
    enter_running,
    exit_running,
    enter_wash,
    exit_wash,
    enter_rinse,
    exit_rinse,
    exit_soak
);

#[action]
fn enter_drain(w: &mut Washer) -> Result<(), ActionError> {
    w.log.push("enter_drain".into());
    // Fails in long runs: a failing entry must undo the whole transition.
    if w.log.len() > 60 {
        return Err(ActionError::new("drain blocked"));
    }
    Ok(())
}

#[action]
fn flip(w: &mut Washer) {
    w.ok = !w.ok;
    w.log.push("flip".into());
}

fn ok(w: &Washer) -> bool {
    w.ok
}

// ---- the reference interpreter ------------------------------------------------------------

fn run(name: &str, w: &mut Washer) -> Result<(), ()> {
    match name {
        "enter_drain" => enter_drain(w).map_err(|_| ()),
        "flip" => {
            flip(w);
            Ok(())
        }
        other => {
            w.log.push(other.to_string());
            Ok(())
        }
    }
}

struct Reference {
    fsm: FsmDef,
    parent: HashMap<String, Option<String>>,
    initial: HashMap<String, String>,
    leaf: String,
    data: Washer,
    generation: u64,
    timers: HashMap<String, u64>,
    history: HashMap<String, String>,
}

impl Reference {
    fn new() -> Self {
        let attr: proc_macro2::TokenStream = format!("strategy = Fsm, transitions {{ {MACHINE} }}")
            .parse()
            .unwrap();
        let item: syn::Item = syn::parse_str("struct Washer;").unwrap();
        let def = agent_dsl::tokens::agent(attr, &item).unwrap();
        agent_dsl::check::agent(&def).expect("the machine is valid");
        let Some(StrategyDef::Fsm(fsm)) = def.strategy.get() else {
            panic!("not an FSM")
        };
        let mut parent: HashMap<String, Option<String>> = HashMap::new();
        let mut initial = HashMap::new();
        for c in &fsm.compounds {
            parent.insert(c.state.value.clone(), c.block.clone());
            for i in &c.initial {
                parent.insert(i.value.clone(), Some(c.state.value.clone()));
                initial.insert(c.state.value.clone(), i.value.clone());
            }
        }
        for t in &fsm.terminals {
            parent
                .entry(t.state.value.clone())
                .or_insert(t.block.clone());
        }
        for row in &fsm.rows {
            if row.block.as_deref() != Some(row.from.value.as_str()) {
                parent
                    .entry(row.from.value.clone())
                    .or_insert(row.block.clone());
            }
        }
        for row in &fsm.rows {
            let history = fsm.histories.iter().any(|h| h.name.value == row.to.value);
            if !history {
                parent
                    .entry(row.to.value.clone())
                    .or_insert(row.block.clone());
            }
        }
        let top = fsm.initial_state().unwrap().value.clone();
        let mut reference = Reference {
            fsm: fsm.clone(),
            parent,
            initial,
            leaf: String::new(),
            data: Washer::default(),
            generation: 0,
            timers: HashMap::new(),
            history: HashMap::new(),
        };
        reference.leaf = reference.descend(&top);
        reference
    }

    fn descend(&self, state: &str) -> String {
        let mut at = state.to_string();
        while let Some(child) = self.initial.get(&at) {
            at = child.clone();
        }
        at
    }

    /// `state` and its ancestors, innermost first.
    fn chain(&self, state: &str) -> Vec<String> {
        let mut out = vec![state.to_string()];
        while let Some(Some(p)) = self.parent.get(out.last().unwrap()) {
            out.push(p.clone());
        }
        out
    }

    fn is_proper_descendant(&self, state: &str, of: &str) -> bool {
        self.chain(state).iter().skip(1).any(|s| s == of)
    }

    fn event(&mut self, event: &str) -> Verdict {
        let mut any = false;
        for state in self.chain(&self.leaf) {
            let rows: Vec<RowDef> = self
                .fsm
                .rows
                .iter()
                .filter(|r| {
                    r.from.value == state
                        && matches!(&r.trigger, Trigger::Event(e) if e.value == event)
                })
                .cloned()
                .collect();
            for row in rows {
                any = true;
                if row.guard.is_none() || ok(&self.data) {
                    return self.fire(&row);
                }
            }
        }
        if any {
            Verdict::Rejected
        } else {
            Verdict::Invalid
        }
    }

    fn timer(&mut self, state: &str, generation: u64) -> Verdict {
        if self.timers.get(state) != Some(&generation) {
            return Verdict::Ignored;
        }
        let row = self
            .fsm
            .rows
            .iter()
            .find(|r| r.from.value == state && matches!(r.trigger, Trigger::After(_)))
            .cloned()
            .unwrap();
        self.fire(&row)
    }

    fn fire(&mut self, row: &RowDef) -> Verdict {
        let mut draft = self.data.clone();
        if row.internal {
            let name = action_name(&row.action.as_ref().unwrap().value);
            if run(&name, &mut draft).is_err() {
                return Verdict::Failed(name);
            }
            self.data = draft;
            return Verdict::Fired(Vec::new());
        }
        let history = self
            .fsm
            .histories
            .iter()
            .find(|h| h.name.value == row.to.value)
            .cloned();
        let source = row.from.value.clone();
        // The state the target designates, and the leaf it enters.
        let (target, leaf) = match &history {
            Some(h) => {
                let compound = h.block.clone().unwrap();
                let leaf = match self.history.get(&compound) {
                    Some(last) if h.deep => last.clone(),
                    Some(last) => {
                        let chain = self.chain(last);
                        let at = chain.iter().position(|s| *s == compound).unwrap();
                        self.descend(&chain[at - 1])
                    }
                    None => self.descend(
                        h.default
                            .as_ref()
                            .map_or(&self.initial[&compound], |d| &d.value),
                    ),
                };
                (compound, leaf)
            }
            None => (row.to.value.clone(), self.descend(&row.to.value)),
        };
        let inside = |r: &Self, anc: &str| {
            if history.is_some() {
                target == anc || r.is_proper_descendant(&target, anc)
            } else {
                r.is_proper_descendant(&target, anc)
            }
        };
        let domain = if row.local && inside(self, &source) {
            Some(source.clone())
        } else {
            self.chain(&source)
                .into_iter()
                .skip(1)
                .find(|a| inside(self, a))
        };
        let below = |chain: Vec<String>| -> Vec<String> {
            chain
                .into_iter()
                .take_while(|s| Some(s) != domain.as_ref())
                .collect()
        };
        let exits = below(self.chain(&self.leaf));
        let mut entries = below(self.chain(&leaf));
        entries.reverse();
        let mut steps = Vec::new();
        for s in &exits {
            if let Some(h) = self.fsm.hook(HookKind::Exit, s) {
                steps.push(action_name(&h.action.value));
            }
        }
        if let Some(a) = &row.action {
            steps.push(action_name(&a.value));
        }
        for s in &entries {
            if let Some(h) = self.fsm.hook(HookKind::Enter, s) {
                steps.push(action_name(&h.action.value));
            }
        }
        for name in steps {
            if run(&name, &mut draft).is_err() {
                return Verdict::Failed(name);
            }
        }
        self.data = draft;
        for s in &exits {
            if self
                .fsm
                .histories
                .iter()
                .any(|h| h.block.as_deref() == Some(s))
            {
                self.history.insert(s.clone(), self.leaf.clone());
            }
            self.timers.remove(s);
        }
        self.leaf = leaf;
        self.generation += 1;
        let mut armed = Vec::new();
        for s in &entries {
            let after = self.fsm.rows.iter().find_map(|r| match &r.trigger {
                Trigger::After(d) if r.from.value == *s => Some(u128::from(d.value.0)),
                _ => None,
            });
            if let Some(ms) = after {
                self.timers.insert(s.clone(), self.generation);
                armed.push((ms, s.clone(), self.generation));
            }
        }
        Verdict::Fired(armed)
    }
}

// ---- the generated machine, seen the same way ----------------------------------------------

#[derive(Debug, Clone)]
enum Step {
    Event(&'static str),
    /// Deliver the timer armed this many arms ago (0 = the latest), which may be stale.
    Timer(usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        // Weighted so that runs go deep (Drain) and come back through both histories.
        5 => prop::sample::select(vec![
            "start", "start", "resume", "resume", "back", "back", "finish", "pause", "pause",
            "again", "restart", "flip", "flip", "next", "next", "next", "next", "skip", "stop",
        ])
        .prop_map(Step::Event),
        1 => (0usize..3).prop_map(Step::Timer),
    ]
}

/// Proptest cases: 256 in CI, `AGENT_FUZZ_CASES` for a long run.
fn cases() -> u32 {
    std::env::var("AGENT_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(256)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn the_generated_statechart_agrees_with_the_model(steps in prop::collection::vec(step(), 1..60)) {
        let mut agent = Washer::new();
        let mut reference = Reference::new();
        prop_assert!(agent.init().is_empty(), "Idle arms no timer");
        let mut timers: Vec<Signal> = Vec::new();
        for step in steps {
            let (got, want) = match &step {
                Step::Event(name) => {
                    let event = <Washer as FsmSpec>::event(name).unwrap();
                    (verdict_of(agent.cmd(event).map(Vec::from).map_err(AgentError::from)), reference.event(name))
                }
                Step::Timer(back) => {
                    let Some(signal) = timers.iter().rev().nth(*back).cloned() else {
                        continue;
                    };
                    prop_assert_eq!(&signal.signal_type, TIMEOUT_SIGNAL);
                    let want = reference.timer(
                        signal.data["state"].as_str().unwrap(),
                        signal.data["generation"].as_u64().unwrap(),
                    );
                    let directives = agent.handle_signal(&signal);
                    let got = match (&want, directives.as_slice()) {
                        (Verdict::Ignored, []) => (Verdict::Ignored, Vec::new()),
                        (_, [Directive::Error { error, .. }]) => verdict_of(Err(error.clone())),
                        _ => verdict_of(Ok(directives)),
                    };
                    (got, want)
                }
            };
            let (got, armed) = got;
            prop_assert_eq!(&got, &want, "step {:?}", step);
            timers.extend(armed);
            prop_assert_eq!(agent.fsm_state().name(), reference.leaf.as_str());
            prop_assert_eq!(agent.state(), &reference.data);
            for ancestor in reference.chain(&reference.leaf) {
                let state = <Washer as FsmSpec>::STATES
                    .iter()
                    .find(|s| s.name() == ancestor)
                    .copied()
                    .unwrap();
                prop_assert!(agent.in_state(state));
            }
        }
    }
}
