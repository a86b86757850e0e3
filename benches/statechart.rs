//! A 3-level statechart (a washing machine: `On` holds `Running`, which holds `Rinse`) as a
//! Stratagem FSM agent against a hand-written nested `match` over nested enums and statig's
//! superstates, all driven by the same 1,027 valid events (79 cycles) per iteration. The cycle uses rows of
//! every level: a leaf's own rows, a row of `Rinse` taken from `Drain`, a row of `Running`
//! from `Wash`, a row of `On` from `Soak` (three levels up), and entries into compound states
//! that descend through `initial` to a leaf.
//!
//! - `transitions`: the machine alone. Ours is `agent.cmd(WasherEvent::X)` (the typed API: the
//!   transition, exits and entries through the row's domain, the generation counter);
//!   `stratagem_match` is the generated transition function alone (one `match` on
//!   `(leaf, event)` with the ancestors' rows merged in); `hand_written` is a nested `match`
//!   that tries the innermost state first and falls back to each parent.
//! - `with_actions`: entering `Rinse` and leaving `Running` run an action counting them (ours:
//!   `enter`/`exit` `#[action]`s with the FSM's all-or-nothing guarantee; the others: in place).
//!
//! Fairness as in `benches/fsm.rs`: each machine's storage goes through `black_box` once
//! before its timed loop and each result through `black_box`; every implementation is checked
//! to end where the others end. The flat machines are measured in `benches/fsm.rs`; this file
//! is separate so the two can change independently.
//!
//! `cargo bench -p stratagem-benches --bench statechart`; results in BENCHMARKS.md.

use std::hint::black_box;

use criterion::{Criterion, Throughput};
use stratagem::prelude::*;

/// The events, shared by every implementation (public: statig's generated code names it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum E {
    /// The power button.
    Power,
    /// Start a programme.
    Start,
    /// Stop the programme.
    Stop,
    /// The current phase is over.
    Next,
    /// Rinse again.
    Again,
}

/// A cycle that uses rows of every level and ends where it began (Off).
const CYCLE: [E; 13] = [
    E::Power, // Off -> On (Idle)
    E::Start, // Idle -> Running (Wash)
    E::Next,  // Wash -> Rinse (Soak)
    E::Next,  // Soak -> Drain
    E::Again, // Rinse's row, from Drain -> Wash
    E::Next,  // Wash -> Rinse (Soak)
    E::Next,  // Soak -> Drain
    E::Next,  // Drain -> Spin
    E::Next,  // Spin -> Wash
    E::Stop,  // Running's row, from Wash -> Idle
    E::Start, // Idle -> Running (Wash)
    E::Next,  // Wash -> Rinse (Soak)
    E::Power, // On's row, from Soak -> Off
];

/// Whole cycles (1,027 events), so every iteration starts where the last ended.
const EVENTS: usize = CYCLE.len() * 79;

fn sequence() -> Vec<E> {
    CYCLE.iter().copied().cycle().take(EVENTS).collect()
}

// ---- ours -----------------------------------------------------------------------------------

mod ours {
    use stratagem::prelude::*;

    macro_rules! washer {
        ($name:ident, $($hooks:tt)*) => {
            #[agent(strategy = Fsm, transitions {
                initial Off
                $($hooks)*
                Off -> On on power
                state On {
                    initial Idle
                    On -> Off on power
                    Idle -> Running on start
                    state Running {
                        initial Wash
                        Running -> Idle on stop
                        Wash -> Rinse on next
                        Spin -> Wash on next
                        state Rinse {
                            initial Soak
                            Rinse -> Wash on again
                            Soak -> Drain on next
                            Drain -> Spin on next
                        }
                    }
                }
            })]
            #[derive(Debug, Clone, Default, Serialize, Deserialize)]
            pub struct $name {
                pub rinses: u64,
                pub runs: u64,
            }
        };
    }

    washer!(Washer,);
    washer!(WasherCounting, enter Rinse do count_rinse exit Running do count_run);

    #[action]
    fn count_rinse(w: &mut WasherCounting) {
        w.rinses += 1;
    }

    #[action]
    fn count_run(w: &mut WasherCounting) {
        w.runs += 1;
    }

    pub fn event(e: super::E) -> WasherEvent {
        use super::E;
        match e {
            E::Power => WasherEvent::Power,
            E::Start => WasherEvent::Start,
            E::Stop => WasherEvent::Stop,
            E::Next => WasherEvent::Next,
            E::Again => WasherEvent::Again,
        }
    }

    pub fn counting_event(e: super::E) -> WasherCountingEvent {
        WasherCountingEvent::from_name(event(e).name()).expect("the same events")
    }
}

// ---- hand-written: nested enums, a nested `match`, innermost first ----------------------------

mod hand {
    use super::E;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Rinse {
        Soak,
        Drain,
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Running {
        Wash,
        Rinse(Rinse),
        Spin,
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum On {
        Idle,
        Running(Running),
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum State {
        Off,
        On(On),
    }

    #[derive(Debug, Default)]
    pub struct Counts {
        pub rinses: u64,
        pub runs: u64,
    }

    const RINSE: Running = Running::Rinse(Rinse::Soak);

    /// The leaf's name, to compare with the others.
    pub fn leaf(s: State) -> &'static str {
        match s {
            State::Off => "Off",
            State::On(On::Idle) => "Idle",
            State::On(On::Running(Running::Wash)) => "Wash",
            State::On(On::Running(Running::Spin)) => "Spin",
            State::On(On::Running(Running::Rinse(Rinse::Soak))) => "Soak",
            State::On(On::Running(Running::Rinse(Rinse::Drain))) => "Drain",
        }
    }

    fn rinse(r: Rinse, e: E, counts: Option<&mut Counts>) -> Option<Running> {
        match (r, e) {
            (Rinse::Soak, E::Next) => Some(Running::Rinse(Rinse::Drain)),
            (Rinse::Drain, E::Next) => Some(Running::Spin),
            // Rinse's own row.
            (_, E::Again) => Some(Running::Wash),
            _ => {
                let _ = counts;
                None
            }
        }
    }

    fn running(r: Running, e: E, mut counts: Option<&mut Counts>) -> Option<On> {
        let inner = match r {
            Running::Wash if e == E::Next => {
                if let Some(c) = counts.as_deref_mut() {
                    c.rinses += 1;
                }
                Some(RINSE)
            }
            Running::Spin if e == E::Next => Some(Running::Wash),
            Running::Rinse(x) => rinse(x, e, counts.as_deref_mut()),
            _ => None,
        };
        match inner {
            Some(r) => Some(On::Running(r)),
            // Running's own row.
            None if e == E::Stop => {
                if let Some(c) = counts {
                    c.runs += 1;
                }
                Some(On::Idle)
            }
            None => None,
        }
    }

    /// The next state, or `None` when no state handles the event.
    pub fn next(s: State, e: E, mut counts: Option<&mut Counts>) -> Option<State> {
        match s {
            State::Off if e == E::Power => Some(State::On(On::Idle)),
            State::Off => None,
            State::On(on) => {
                let inner = match on {
                    On::Idle if e == E::Start => Some(On::Running(Running::Wash)),
                    On::Idle => None,
                    On::Running(r) => running(r, e, counts.as_deref_mut()),
                };
                match inner {
                    Some(on) => Some(State::On(on)),
                    // On's own row: leaving `Running` (if active) counts a run.
                    None if e == E::Power => {
                        if let (Some(c), On::Running(_)) = (counts, on) {
                            c.runs += 1;
                        }
                        Some(State::Off)
                    }
                    None => None,
                }
            }
        }
    }
}

// ---- statig, with superstates ---------------------------------------------------------------

mod with_statig {
    use super::E;
    use statig::prelude::*;

    #[derive(Default)]
    pub struct Washer {
        pub rinses: u64,
        pub runs: u64,
        pub counting: bool,
    }

    #[state_machine(initial = "State::off()")]
    impl Washer {
        #[state]
        fn off(event: &E) -> Outcome<State> {
            match event {
                E::Power => Transition(State::idle()),
                _ => Super,
            }
        }

        #[superstate]
        fn on(event: &E) -> Outcome<State> {
            match event {
                E::Power => Transition(State::off()),
                _ => Super,
            }
        }

        #[state(superstate = "on")]
        fn idle(event: &E) -> Outcome<State> {
            match event {
                E::Start => Transition(State::wash()),
                _ => Super,
            }
        }

        #[superstate(superstate = "on", exit_action = "leave_running")]
        fn running(event: &E) -> Outcome<State> {
            match event {
                E::Stop => Transition(State::idle()),
                _ => Super,
            }
        }

        #[action]
        fn leave_running(&mut self) {
            if self.counting {
                self.runs += 1;
            }
        }

        #[state(superstate = "running")]
        fn wash(event: &E) -> Outcome<State> {
            match event {
                E::Next => Transition(State::soak()),
                _ => Super,
            }
        }

        #[state(superstate = "running")]
        fn spin(event: &E) -> Outcome<State> {
            match event {
                E::Next => Transition(State::wash()),
                _ => Super,
            }
        }

        #[superstate(superstate = "running", entry_action = "enter_rinse")]
        fn rinse(event: &E) -> Outcome<State> {
            match event {
                E::Again => Transition(State::wash()),
                _ => Super,
            }
        }

        #[action]
        fn enter_rinse(&mut self) {
            if self.counting {
                self.rinses += 1;
            }
        }

        #[state(superstate = "rinse")]
        fn soak(event: &E) -> Outcome<State> {
            match event {
                E::Next => Transition(State::drain()),
                _ => Super,
            }
        }

        #[state(superstate = "rinse")]
        fn drain(event: &E) -> Outcome<State> {
            match event {
                E::Next => Transition(State::spin()),
                _ => Super,
            }
        }
    }

    pub fn leaf(state: &State) -> &'static str {
        match state {
            State::Off {} => "Off",
            State::Idle {} => "Idle",
            State::Wash {} => "Wash",
            State::Spin {} => "Spin",
            State::Soak {} => "Soak",
            State::Drain {} => "Drain",
        }
    }
}

// ---- the runs -------------------------------------------------------------------------------

fn transitions(c: &mut Criterion) {
    let seq = sequence();
    let mut group = c.benchmark_group("statechart/transitions");
    group.throughput(Throughput::Elements(EVENTS as u64));

    let events: Vec<ours::WasherEvent> = seq.iter().copied().map(ours::event).collect();
    group.bench_function("stratagem", |b| {
        let mut agent = ours::Washer::new();
        agent.init();
        black_box(&mut agent);
        b.iter(|| {
            for &e in &events {
                let directives = agent.cmd(black_box(e)).expect("every event is valid");
                black_box(directives.len());
            }
        });
        assert_eq!(agent.fsm_state(), ours::WasherState::Off);
    });

    group.bench_function("stratagem_match", |b| {
        use stratagem::FsmSpec;
        use stratagem::strategy::fsm::Step;
        let washer = ours::Washer::default();
        let null = serde_json::Value::Null;
        let mut state = ours::WasherState::Off;
        black_box(&mut state);
        b.iter(|| {
            for &e in &events {
                state = match ours::Washer::transition(&washer, state, black_box(e), &null) {
                    Step::Fire(_, to) => to,
                    other => panic!("every event is valid: {other:?}"),
                };
                black_box(state);
            }
        });
        assert_eq!(state, ours::WasherState::Off);
    });

    group.bench_function("hand_written", |b| {
        let mut state = hand::State::Off;
        black_box(&mut state);
        b.iter(|| {
            for &e in &seq {
                state = hand::next(state, black_box(e), None).expect("every event is valid");
                black_box(state);
            }
        });
        assert_eq!(state, hand::State::Off);
    });

    group.bench_function("statig", |b| {
        use statig::prelude::*;
        let mut machine = with_statig::Washer::default().state_machine();
        black_box(&mut machine);
        b.iter(|| {
            for e in &seq {
                machine.handle(black_box(e));
                black_box(machine.state());
            }
        });
        assert_eq!(with_statig::leaf(machine.state()), "Off");
    });
    group.finish();
}

fn with_actions(c: &mut Criterion) {
    let seq = sequence();
    let mut group = c.benchmark_group("statechart/with_actions");
    group.throughput(Throughput::Elements(EVENTS as u64));

    let events: Vec<ours::WasherCountingEvent> =
        seq.iter().copied().map(ours::counting_event).collect();
    group.bench_function("stratagem", |b| {
        let mut agent = ours::WasherCounting::new();
        agent.init();
        black_box(&mut agent);
        b.iter(|| {
            for &e in &events {
                let directives = agent.cmd(black_box(e)).expect("every event is valid");
                black_box(directives.len());
            }
        });
        assert!(agent.state().rinses > 0);
    });

    group.bench_function("hand_written", |b| {
        let mut state = hand::State::Off;
        let mut counts = hand::Counts::default();
        black_box(&mut state);
        black_box(&mut counts);
        b.iter(|| {
            for &e in &seq {
                state = hand::next(state, black_box(e), Some(&mut counts)).expect("valid");
                black_box(state);
            }
        });
        assert!(counts.rinses > 0);
    });

    group.bench_function("statig", |b| {
        use statig::prelude::*;
        let mut machine = with_statig::Washer {
            counting: true,
            ..Default::default()
        }
        .state_machine();
        black_box(&mut machine);
        b.iter(|| {
            for e in &seq {
                machine.handle(black_box(e));
                black_box(machine.state());
            }
        });
        assert!(machine.inner().rinses > 0);
    });
    group.finish();
}

/// Every implementation must agree on every leaf and on what it counted.
fn check_agreement() {
    use statig::prelude::*;
    let mut agent = ours::WasherCounting::new();
    agent.init();
    let mut state = hand::State::Off;
    let mut counts = hand::Counts::default();
    let mut machine = with_statig::Washer {
        counting: true,
        ..Default::default()
    }
    .state_machine();
    for &e in &sequence() {
        agent.cmd(ours::counting_event(e)).expect("valid");
        state = hand::next(state, e, Some(&mut counts)).expect("valid");
        machine.handle(&e);
        let ours = agent.fsm_state().name();
        assert_eq!(ours, hand::leaf(state), "after {e:?}");
        assert_eq!(ours, with_statig::leaf(machine.state()), "after {e:?}");
    }
    let theirs = machine.inner();
    assert_eq!(
        (agent.state().rinses, agent.state().runs),
        (counts.rinses, counts.runs)
    );
    assert_eq!((theirs.rinses, theirs.runs), (counts.rinses, counts.runs));
}

fn main() {
    check_agreement();
    let mut criterion = Criterion::default().configure_from_args();
    transitions(&mut criterion);
    with_actions(&mut criterion);
    criterion.final_summary();
}
