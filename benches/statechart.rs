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

#[path = "profile.rs"]
mod profile;
use profile::bench;

#[path = "washer.rs"]
mod washer;

use washer::{EVENTS, hand, ours, sequence, with_statig};

// ---- the runs -------------------------------------------------------------------------------

fn transitions(c: &mut Criterion) {
    let seq = sequence();
    let mut group = c.benchmark_group("statechart/transitions");
    group.throughput(Throughput::Elements(EVENTS as u64));

    let events: Vec<ours::WasherEvent> = seq.iter().copied().map(ours::event).collect();
    bench(&mut group, "statechart/transitions", "stratagem", |b| {
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

    bench(
        &mut group,
        "statechart/transitions",
        "stratagem_match",
        |b| {
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
        },
    );

    bench(&mut group, "statechart/transitions", "hand_written", |b| {
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

    bench(&mut group, "statechart/transitions", "statig", |b| {
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
    bench(&mut group, "statechart/with_actions", "stratagem", |b| {
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

    bench(&mut group, "statechart/with_actions", "hand_written", |b| {
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

    bench(&mut group, "statechart/with_actions", "statig", |b| {
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
