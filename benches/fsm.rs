//! The CD player (5 states, 8 events; Boost.MSM's classic example) as a Stratagem FSM agent
//! against a hand-written `match` and three peers (statig, rust-fsm, smlang), all driven by the
//! same sequence of 1,024 valid events per iteration.
//!
//! - `transitions`: the machine alone. Ours is `agent.cmd(CdEvent::X)`, the typed API, which
//!   also keeps the generation counter and the started flag in the agent and returns the
//!   (empty) directive list; `stratagem_match` is the generated transition function alone (the
//!   `match` on `(state, event)` that `cmd` runs); the hand-written one is
//!   `state = next(state, event)`.
//! - `with_actions`: every row that plays music runs an action counting tracks and pauses. Ours
//!   runs `#[action]`s with the FSM's guarantees (one draft of the state, committed only if the
//!   actions succeed, panics caught, parameters decoded); the others mutate in place.
//!
//! Fairness: each machine's storage goes through `black_box` once before its timed loop (in
//! real use a machine lives in memory between events: in an agent, a struct, a heap object);
//! LLVM may still keep a hand-written loop's state in a register (it does for the statechart's
//! nested `match`, which measured no faster than the same loop with its state in memory,
//! BENCHMARKS.md, sixth pass), and each event's result goes
//! through `black_box` (ours: the number of directives, a scalar like the others' results; a
//! 24-byte `Vec` forced through memory costs store-forwarding stalls that no real caller pays).
//! Every implementation is checked to end where the others end.
//!
//! - `mixed`, `mixed_with_actions`: what a device sees: 1,024 events of which three in four are
//!   refused in the state they arrive in (a fixed-seed stream); each result is looked at, as a
//!   device loop does: `let accepted = agent.cmd(e).is_ok();`, then `accepted` goes to
//!   `black_box`. The result is dropped before the sink, as in any program that tests it
//!   (`if agent.cmd(e).is_ok() { .. }` drops it before the block). Written
//!   `black_box(agent.cmd(e).is_ok())`, the result would be dropped *after* the sink's opaque
//!   `asm`, which keeps the optimizer from folding its drop into each arm: a test of the
//!   result's variant per event that no real caller pays (BENCHMARKS.md, tenth pass).
//!
//! - `mixed_long`: the `mixed` kind of stream, 262,144 events long: more than a branch
//!   predictor can learn by heart, so the figure depends less on where the linker put the
//!   code.
//!
//! - `statechart_mixed`: the same kind of stream for a 3-level statechart (`washer.rs`, shared
//!   with `benches/statechart.rs`): ours through `agent.cmd`, a hand-written nested `match`
//!   that tries the innermost state and falls back to each parent, statig's superstates.
//!
//! `cargo bench -p stratagem-benches --bench fsm`; the results and ratios are in BENCHMARKS.md.

use std::hint::black_box;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput};
use stratagem::prelude::*;

#[path = "profile.rs"]
mod profile;
use profile::bench;

#[path = "washer.rs"]
mod washer;

/// The events, shared by every implementation (public: statig's generated code names it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum E {
    /// The drawer button.
    OpenClose,
    /// A disc was inserted and the drawer closed.
    CdDetected,
    /// Play.
    Play,
    /// Skip forward.
    NextSong,
    /// Skip back.
    PreviousSong,
    /// Pause.
    Pause,
    /// Resume.
    EndPause,
    /// Stop.
    Stop,
}

/// A cycle through every row of the machine that ends where it began (Empty).
const CYCLE: [E; 16] = [
    E::OpenClose,    // Empty -> Open
    E::OpenClose,    // Open -> Empty
    E::CdDetected,   // Empty -> Stopped
    E::Play,         // Stopped -> Playing
    E::NextSong,     // Playing -> Playing
    E::PreviousSong, // Playing -> Playing
    E::Pause,        // Playing -> Paused
    E::EndPause,     // Paused -> Playing
    E::Stop,         // Playing -> Stopped
    E::Stop,         // Stopped -> Stopped
    E::Play,         // Stopped -> Playing
    E::Pause,        // Playing -> Paused
    E::Stop,         // Paused -> Stopped
    E::Play,         // Stopped -> Playing
    E::OpenClose,    // Playing -> Open
    E::OpenClose,    // Open -> Empty
];

const EVENTS: usize = 1024;

fn sequence() -> Vec<E> {
    CYCLE.iter().copied().cycle().take(EVENTS).collect()
}

const ALL: [E; 8] = [
    E::OpenClose,
    E::CdDetected,
    E::Play,
    E::NextSong,
    E::PreviousSong,
    E::Pause,
    E::EndPause,
    E::Stop,
];

/// A device's stream: 1,024 events of which three in four are refused in the state the machine
/// is in when they arrive (drawn from a fixed-seed generator; the accepted ones walk the machine
/// through every row). Returns the events and how many are refused.
fn mixed_sequence() -> (Vec<E>, usize) {
    stratagem_benches::device_stream(&ALL, hand::State::Empty, EVENTS, hand::next)
}

/// Events in `fsm/mixed_long`: far more than a branch predictor can learn by heart.
const LONG_EVENTS: usize = 262_144;

// ---- ours -----------------------------------------------------------------------------------

mod ours {
    use stratagem::prelude::*;

    /// The CD player as declared transitions.
    #[agent(strategy = Fsm, transitions {
        initial Empty
        Empty   -> Open    on open_close
        Empty   -> Stopped on cd_detected
        Open    -> Empty   on open_close
        Stopped -> Playing on play
        Stopped -> Open    on open_close
        Stopped -> Stopped on stop
        Playing -> Stopped on stop
        Playing -> Paused  on pause
        Playing -> Open    on open_close
        Playing -> Playing on next_song
        Playing -> Playing on previous_song
        Paused  -> Playing on end_pause
        Paused  -> Stopped on stop
        Paused  -> Open    on open_close
    })]
    #[derive(Debug, Clone, Default, Serialize, Deserialize)]
    pub struct Cd {}

    /// The same machine whose rows count what was played.
    #[agent(strategy = Fsm, transitions {
        initial Empty
        Empty   -> Open    on open_close
        Empty   -> Stopped on cd_detected
        Open    -> Empty   on open_close
        Stopped -> Playing on play do start_playback
        Stopped -> Open    on open_close
        Stopped -> Stopped on stop
        Playing -> Stopped on stop
        Playing -> Paused  on pause do pause_playback
        Playing -> Open    on open_close
        Playing -> Playing on next_song do next_track
        Playing -> Playing on previous_song do previous_track
        Paused  -> Playing on end_pause do start_playback
        Paused  -> Stopped on stop
        Paused  -> Open    on open_close
    })]
    #[derive(Debug, Clone, Default, Serialize, Deserialize)]
    pub struct CdCounting {
        pub plays: u64,
        pub pauses: u64,
        pub track: i64,
    }

    #[action]
    fn start_playback(cd: &mut CdCounting) {
        cd.plays += 1;
    }

    #[action]
    fn pause_playback(cd: &mut CdCounting) {
        cd.pauses += 1;
    }

    #[action]
    fn next_track(cd: &mut CdCounting) {
        cd.track += 1;
    }

    #[action]
    fn previous_track(cd: &mut CdCounting) {
        cd.track -= 1;
    }

    pub fn event(e: super::E) -> CdEvent {
        use super::E;
        match e {
            E::OpenClose => CdEvent::OpenClose,
            E::CdDetected => CdEvent::CdDetected,
            E::Play => CdEvent::Play,
            E::NextSong => CdEvent::NextSong,
            E::PreviousSong => CdEvent::PreviousSong,
            E::Pause => CdEvent::Pause,
            E::EndPause => CdEvent::EndPause,
            E::Stop => CdEvent::Stop,
        }
    }

    pub fn counting_event(e: super::E) -> CdCountingEvent {
        use super::E;
        match e {
            E::OpenClose => CdCountingEvent::OpenClose,
            E::CdDetected => CdCountingEvent::CdDetected,
            E::Play => CdCountingEvent::Play,
            E::NextSong => CdCountingEvent::NextSong,
            E::PreviousSong => CdCountingEvent::PreviousSong,
            E::Pause => CdCountingEvent::Pause,
            E::EndPause => CdCountingEvent::EndPause,
            E::Stop => CdCountingEvent::Stop,
        }
    }
}

// ---- hand-written ---------------------------------------------------------------------------

mod hand {
    use super::E;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum State {
        Empty,
        Open,
        Stopped,
        Playing,
        Paused,
    }

    #[derive(Debug, Default)]
    pub struct Counts {
        pub plays: u64,
        pub pauses: u64,
        pub track: i64,
    }

    /// The whole machine: one `match`; `None` for an event the state does not accept.
    #[inline]
    pub fn next(state: State, event: E) -> Option<State> {
        use State::*;
        Some(match (state, event) {
            (Empty, E::OpenClose) => Open,
            (Empty, E::CdDetected) => Stopped,
            (Open, E::OpenClose) => Empty,
            (Stopped, E::Play) => Playing,
            (Stopped, E::OpenClose) => Open,
            (Stopped, E::Stop) => Stopped,
            (Playing, E::Stop) => Stopped,
            (Playing, E::Pause) => Paused,
            (Playing, E::OpenClose) => Open,
            (Playing, E::NextSong) | (Playing, E::PreviousSong) => Playing,
            (Paused, E::EndPause) => Playing,
            (Paused, E::Stop) => Stopped,
            (Paused, E::OpenClose) => Open,
            _ => return None,
        })
    }

    /// The same, with the counting actions.
    #[inline]
    pub fn next_counting(state: State, event: E, counts: &mut Counts) -> Option<State> {
        use State::*;
        Some(match (state, event) {
            (Empty, E::OpenClose) => Open,
            (Empty, E::CdDetected) => Stopped,
            (Open, E::OpenClose) => Empty,
            (Stopped, E::Play) | (Paused, E::EndPause) => {
                counts.plays += 1;
                Playing
            }
            (Stopped, E::OpenClose) => Open,
            (Stopped, E::Stop) => Stopped,
            (Playing, E::Stop) => Stopped,
            (Playing, E::Pause) => {
                counts.pauses += 1;
                Paused
            }
            (Playing, E::OpenClose) => Open,
            (Playing, E::NextSong) => {
                counts.track += 1;
                Playing
            }
            (Playing, E::PreviousSong) => {
                counts.track -= 1;
                Playing
            }
            (Paused, E::Stop) => Stopped,
            (Paused, E::OpenClose) => Open,
            _ => return None,
        })
    }
}

// ---- statig ---------------------------------------------------------------------------------

mod with_statig {
    use super::E;
    use statig::prelude::*;

    #[derive(Default)]
    pub struct Player {
        pub plays: u64,
        pub pauses: u64,
        pub track: i64,
        pub counting: bool,
    }

    #[state_machine(initial = "State::empty()")]
    impl Player {
        #[state]
        fn empty(event: &E) -> Outcome<State> {
            match event {
                E::OpenClose => Transition(State::open()),
                E::CdDetected => Transition(State::stopped()),
                _ => Super,
            }
        }

        #[state]
        fn open(event: &E) -> Outcome<State> {
            match event {
                E::OpenClose => Transition(State::empty()),
                _ => Super,
            }
        }

        #[state]
        fn stopped(&mut self, event: &E) -> Outcome<State> {
            match event {
                E::Play => {
                    if self.counting {
                        self.plays += 1;
                    }
                    Transition(State::playing())
                }
                E::OpenClose => Transition(State::open()),
                E::Stop => Transition(State::stopped()),
                _ => Super,
            }
        }

        #[state]
        fn playing(&mut self, event: &E) -> Outcome<State> {
            match event {
                E::Stop => Transition(State::stopped()),
                E::Pause => {
                    if self.counting {
                        self.pauses += 1;
                    }
                    Transition(State::paused())
                }
                E::OpenClose => Transition(State::open()),
                E::NextSong => {
                    if self.counting {
                        self.track += 1;
                    }
                    Transition(State::playing())
                }
                E::PreviousSong => {
                    if self.counting {
                        self.track -= 1;
                    }
                    Transition(State::playing())
                }
                _ => Super,
            }
        }

        #[state]
        fn paused(&mut self, event: &E) -> Outcome<State> {
            match event {
                E::EndPause => {
                    if self.counting {
                        self.plays += 1;
                    }
                    Transition(State::playing())
                }
                E::Stop => Transition(State::stopped()),
                E::OpenClose => Transition(State::open()),
                _ => Super,
            }
        }
    }
}

// ---- rust-fsm -------------------------------------------------------------------------------

mod with_rust_fsm {
    use rust_fsm::*;

    state_machine! {
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub cd_player(Empty)

        Empty(OpenClose) => Open,
        Empty(CdDetected) => Stopped,
        Open(OpenClose) => Empty,
        Stopped(Play) => Playing [Played],
        Stopped(OpenClose) => Open,
        Stopped(Stop) => Stopped,
        Playing(Stop) => Stopped,
        Playing(Pause) => Paused [Paused],
        Playing(OpenClose) => Open,
        Playing(NextSong) => Playing [Next],
        Playing(PreviousSong) => Playing [Previous],
        Paused(EndPause) => Playing [Played],
        Paused(Stop) => Stopped,
        Paused(OpenClose) => Open,
    }

    pub fn input(e: super::E) -> cd_player::Input {
        use super::E;
        match e {
            E::OpenClose => cd_player::Input::OpenClose,
            E::CdDetected => cd_player::Input::CdDetected,
            E::Play => cd_player::Input::Play,
            E::NextSong => cd_player::Input::NextSong,
            E::PreviousSong => cd_player::Input::PreviousSong,
            E::Pause => cd_player::Input::Pause,
            E::EndPause => cd_player::Input::EndPause,
            E::Stop => cd_player::Input::Stop,
        }
    }
}

// ---- smlang ---------------------------------------------------------------------------------

mod with_smlang {
    use smlang::statemachine;

    statemachine! {
        derive_events: [Clone, Copy, Debug],
        transitions: {
            *Empty + OpenClose = Open,
            Empty + CdDetected = Stopped,
            Open + OpenClose = Empty,
            Stopped + Play / start_playback = Playing,
            Stopped + OpenClose = Open,
            Stopped + Stop = Stopped,
            Playing + Stop = Stopped,
            Playing + Pause / pause_playback = Paused,
            Playing + OpenClose = Open,
            Playing + NextSong / next_track = Playing,
            Playing + PreviousSong / previous_track = Playing,
            Paused + EndPause / start_playback = Playing,
            Paused + Stop = Stopped,
            Paused + OpenClose = Open,
        }
    }

    #[derive(Default)]
    pub struct Player {
        pub plays: u64,
        pub pauses: u64,
        pub track: i64,
        pub counting: bool,
    }

    impl StateMachineContext for Player {
        fn start_playback(&mut self) -> Result<(), ()> {
            if self.counting {
                self.plays += 1;
            }
            Ok(())
        }
        fn pause_playback(&mut self) -> Result<(), ()> {
            if self.counting {
                self.pauses += 1;
            }
            Ok(())
        }
        fn next_track(&mut self) -> Result<(), ()> {
            if self.counting {
                self.track += 1;
            }
            Ok(())
        }
        fn previous_track(&mut self) -> Result<(), ()> {
            if self.counting {
                self.track -= 1;
            }
            Ok(())
        }
    }

    pub fn event(e: super::E) -> Events {
        use super::E;
        match e {
            E::OpenClose => Events::OpenClose,
            E::CdDetected => Events::CdDetected,
            E::Play => Events::Play,
            E::NextSong => Events::NextSong,
            E::PreviousSong => Events::PreviousSong,
            E::Pause => Events::Pause,
            E::EndPause => Events::EndPause,
            E::Stop => Events::Stop,
        }
    }
}

// ---- the runs -------------------------------------------------------------------------------

fn transitions(c: &mut Criterion) {
    let seq = sequence();
    let mut group = c.benchmark_group("fsm/transitions");
    group.throughput(Throughput::Elements(EVENTS as u64));

    let events: Vec<ours::CdEvent> = seq.iter().copied().map(ours::event).collect();
    bench(&mut group, "fsm/transitions", "stratagem", |b| {
        let mut agent = ours::Cd::new();
        agent.init();
        black_box(&mut agent);
        b.iter(|| {
            for &e in &events {
                let directives = agent.cmd(black_box(e)).expect("every event is valid");
                black_box(directives.len());
            }
        });
        assert_eq!(agent.fsm_state(), ours::CdState::Empty);
    });

    // The generated transition function alone (the `match` `cmd` runs), without the agent's
    // bookkeeping: what the generated code costs next to the hand-written `match`.
    bench(&mut group, "fsm/transitions", "stratagem_match", |b| {
        use stratagem::FsmSpec;
        use stratagem::strategy::fsm::Step;
        let cd = ours::Cd::default();
        let null = serde_json::Value::Null;
        let mut state = ours::CdState::Empty;
        black_box(&mut state);
        b.iter(|| {
            for &e in &events {
                state = match ours::Cd::transition(&cd, state, black_box(e), &null) {
                    Step::Fire(_, to) => to,
                    other => panic!("every event is valid: {other:?}"),
                };
                black_box(state);
            }
        });
        assert_eq!(state, ours::CdState::Empty);
    });

    bench(&mut group, "fsm/transitions", "hand_written", |b| {
        let mut state = hand::State::Empty;
        black_box(&mut state);
        b.iter(|| {
            for &e in &seq {
                state = hand::next(state, black_box(e)).expect("every event is valid");
                black_box(state);
            }
        });
        assert_eq!(state, hand::State::Empty);
    });

    bench(&mut group, "fsm/transitions", "statig", |b| {
        use statig::prelude::*;
        let mut machine = with_statig::Player::default().state_machine();
        black_box(&mut machine);
        b.iter(|| {
            for e in &seq {
                machine.handle(black_box(e));
                black_box(machine.state());
            }
        });
    });

    let inputs: Vec<_> = seq.iter().copied().map(with_rust_fsm::input).collect();
    bench(&mut group, "fsm/transitions", "rust_fsm", |b| {
        let mut machine = with_rust_fsm::cd_player::StateMachine::new();
        black_box(&mut machine);
        b.iter(|| {
            for input in &inputs {
                let output = machine
                    .consume(black_box(input))
                    .expect("every event is valid");
                black_box(output);
            }
        });
    });

    let sm_events: Vec<_> = seq.iter().copied().map(with_smlang::event).collect();
    bench(&mut group, "fsm/transitions", "smlang", |b| {
        let mut machine = with_smlang::StateMachine::new(with_smlang::Player::default());
        black_box(&mut machine);
        b.iter(|| {
            for e in &sm_events {
                let state = machine
                    .process_event(black_box(*e))
                    .expect("every event is valid");
                black_box(state);
            }
        });
    });
    group.finish();
}

fn with_actions(c: &mut Criterion) {
    let seq = sequence();
    let mut group = c.benchmark_group("fsm/with_actions");
    group.throughput(Throughput::Elements(EVENTS as u64));

    let events: Vec<ours::CdCountingEvent> =
        seq.iter().copied().map(ours::counting_event).collect();
    bench(&mut group, "fsm/with_actions", "stratagem", |b| {
        let mut agent = ours::CdCounting::new();
        agent.init();
        black_box(&mut agent);
        b.iter(|| {
            for &e in &events {
                let directives = agent.cmd(black_box(e)).expect("every event is valid");
                black_box(directives.len());
            }
        });
        assert!(agent.state().plays > 0 && agent.state().pauses > 0);
    });

    bench(&mut group, "fsm/with_actions", "hand_written", |b| {
        let mut state = hand::State::Empty;
        let mut counts = hand::Counts::default();
        black_box((&mut state, &mut counts));
        b.iter(|| {
            for &e in &seq {
                state = hand::next_counting(state, black_box(e), &mut counts)
                    .expect("every event is valid");
                black_box(state);
            }
        });
        assert!(counts.plays > 0);
    });

    bench(&mut group, "fsm/with_actions", "statig", |b| {
        use statig::prelude::*;
        let mut machine = with_statig::Player {
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
    });

    let inputs: Vec<_> = seq.iter().copied().map(with_rust_fsm::input).collect();
    bench(&mut group, "fsm/with_actions", "rust_fsm", |b| {
        use with_rust_fsm::cd_player::Output;
        let mut machine = with_rust_fsm::cd_player::StateMachine::new();
        let mut counts = hand::Counts::default();
        black_box((&mut machine, &mut counts));
        b.iter(|| {
            for input in &inputs {
                // rust-fsm's actions are outputs: the caller applies them.
                match machine
                    .consume(black_box(input))
                    .expect("every event is valid")
                {
                    Some(Output::Played) => counts.plays += 1,
                    Some(Output::Paused) => counts.pauses += 1,
                    Some(Output::Next) => counts.track += 1,
                    Some(Output::Previous) => counts.track -= 1,
                    None => {}
                }
            }
        });
        assert!(counts.plays > 0);
    });

    let sm_events: Vec<_> = seq.iter().copied().map(with_smlang::event).collect();
    bench(&mut group, "fsm/with_actions", "smlang", |b| {
        let mut machine = with_smlang::StateMachine::new(with_smlang::Player {
            counting: true,
            ..Default::default()
        });
        black_box(&mut machine);
        b.iter(|| {
            for e in &sm_events {
                let state = machine
                    .process_event(black_box(*e))
                    .expect("every event is valid");
                black_box(state);
            }
        });
    });
    group.finish();
}

/// Ours through the typed API and the hand-written `match` on `seq`, as a device loop drives
/// a machine: each event's result is looked at (accepted or not), nothing else.
fn ours_and_hand_written(group: &mut BenchmarkGroup<'_, WallTime>, name: &str, seq: &[E]) {
    let events: Vec<ours::CdEvent> = seq.iter().copied().map(ours::event).collect();
    bench(group, name, "stratagem", |b| {
        let mut agent = ours::Cd::new();
        agent.init();
        black_box(&mut agent);
        b.iter(|| {
            for &e in &events {
                let accepted = agent.cmd(black_box(e)).is_ok();
                black_box(accepted);
            }
        });
    });
    bench(group, name, "hand_written", |b| {
        let mut state = hand::State::Empty;
        black_box(&mut state);
        b.iter(|| {
            for &e in seq {
                let next = hand::next(state, black_box(e));
                if let Some(to) = next {
                    state = to;
                }
                black_box(next.is_some());
            }
        });
    });
}

/// The mixed stream (three in four events refused), through the typed API as a device loop
/// drives it: each event's result is looked at (accepted or not), nothing else.
fn mixed(c: &mut Criterion) {
    let (seq, refused) = mixed_sequence();
    assert!(refused * 10 >= seq.len() * 7, "at least 70% refused");
    let mut group = c.benchmark_group("fsm/mixed");
    group.throughput(Throughput::Elements(EVENTS as u64));

    ours_and_hand_written(&mut group, "fsm/mixed", &seq);
    bench(&mut group, "fsm/mixed", "statig", |b| {
        use statig::prelude::*;
        let mut machine = with_statig::Player::default().state_machine();
        black_box(&mut machine);
        b.iter(|| {
            for e in &seq {
                machine.handle(black_box(e));
                black_box(machine.state());
            }
        });
    });
    let inputs: Vec<_> = seq.iter().copied().map(with_rust_fsm::input).collect();
    bench(&mut group, "fsm/mixed", "rust_fsm", |b| {
        let mut machine = with_rust_fsm::cd_player::StateMachine::new();
        black_box(&mut machine);
        b.iter(|| {
            for input in &inputs {
                let accepted = machine.consume(black_box(input)).is_ok();
                black_box(accepted);
            }
        });
    });
    let sm_events: Vec<_> = seq.iter().copied().map(with_smlang::event).collect();
    bench(&mut group, "fsm/mixed", "smlang", |b| {
        let mut machine = with_smlang::StateMachine::new(with_smlang::Player::default());
        black_box(&mut machine);
        b.iter(|| {
            for e in &sm_events {
                let accepted = machine.process_event(black_box(*e)).is_ok();
                black_box(accepted);
            }
        });
    });
    group.finish();

    // The same kind of stream, 256 times longer. A processor's branch predictor learns much
    // of a 1,024-event stream replayed over and over, and how much it learns depends on where
    // the code lies in memory: the same hand-written loop measures 1.0 µs in one build and
    // 2.3 µs in another (BENCHMARKS.md, tenth pass). A stream this long cannot be learned, so
    // each implementation pays what its branches cost on input it cannot foresee, as a device
    // does.
    let (long, refused) =
        stratagem_benches::device_stream(&ALL, hand::State::Empty, LONG_EVENTS, hand::next);
    assert!(refused * 10 >= long.len() * 7, "at least 70% refused");
    let mut group = c.benchmark_group("fsm/mixed_long");
    group.throughput(Throughput::Elements(LONG_EVENTS as u64));
    group.sample_size(20);
    ours_and_hand_written(&mut group, "fsm/mixed_long", &long);
    group.finish();

    let mut group = c.benchmark_group("fsm/mixed_with_actions");
    group.throughput(Throughput::Elements(EVENTS as u64));
    let events: Vec<ours::CdCountingEvent> =
        seq.iter().copied().map(ours::counting_event).collect();
    bench(&mut group, "fsm/mixed_with_actions", "stratagem", |b| {
        let mut agent = ours::CdCounting::new();
        agent.init();
        black_box(&mut agent);
        b.iter(|| {
            for &e in &events {
                let accepted = agent.cmd(black_box(e)).is_ok();
                black_box(accepted);
            }
        });
        assert!(agent.state().plays > 0);
    });
    bench(&mut group, "fsm/mixed_with_actions", "hand_written", |b| {
        let mut state = hand::State::Empty;
        let mut counts = hand::Counts::default();
        black_box((&mut state, &mut counts));
        b.iter(|| {
            for &e in &seq {
                let next = hand::next_counting(state, black_box(e), &mut counts);
                if let Some(to) = next {
                    state = to;
                }
                black_box(next.is_some());
            }
        });
        assert!(counts.plays > 0);
    });
    group.finish();
}

/// The 3-level statechart's mixed stream (three in four events refused), through the typed
/// API as a device loop drives it, next to a hand-written nested `match` and statig.
fn statechart_mixed(c: &mut Criterion) {
    use washer::{hand, ours, with_statig};
    let (seq, refused) = washer::mixed_sequence();
    assert!(refused * 10 >= seq.len() * 7, "at least 70% refused");
    let mut group = c.benchmark_group("fsm/statechart_mixed");
    group.throughput(Throughput::Elements(seq.len() as u64));

    let events: Vec<ours::WasherEvent> = seq.iter().copied().map(ours::event).collect();
    bench(&mut group, "fsm/statechart_mixed", "stratagem", |b| {
        let mut agent = ours::Washer::new();
        agent.init();
        black_box(&mut agent);
        b.iter(|| {
            for &e in &events {
                let accepted = agent.cmd(black_box(e)).is_ok();
                black_box(accepted);
            }
        });
    });
    bench(&mut group, "fsm/statechart_mixed", "hand_written", |b| {
        let mut state = hand::State::Off;
        black_box(&mut state);
        b.iter(|| {
            for &e in &seq {
                let next = hand::next(state, black_box(e), None);
                if let Some(to) = next {
                    state = to;
                }
                black_box(next.is_some());
            }
        });
    });
    bench(&mut group, "fsm/statechart_mixed", "statig", |b| {
        use statig::prelude::*;
        let mut machine = with_statig::Washer::default().state_machine();
        black_box(&mut machine);
        b.iter(|| {
            for e in &seq {
                machine.handle(black_box(e));
                black_box(machine.state());
            }
        });
    });
    group.finish();
}

fn main() {
    // Every implementation must agree on where the sequence leaves the machine and what it
    // counted, or the comparison means nothing.
    check_agreement();
    let mut criterion = Criterion::default().configure_from_args();
    transitions(&mut criterion);
    with_actions(&mut criterion);
    mixed(&mut criterion);
    statechart_mixed(&mut criterion);
    criterion.final_summary();
}

fn check_agreement() {
    use statig::prelude::*;
    let (mixed, _) = washer::mixed_sequence();
    let mut agent = washer::ours::Washer::new();
    let mut state = washer::hand::State::Off;
    let mut machine = washer::with_statig::Washer::default().state_machine();
    for &e in &mixed {
        let accepted = agent.cmd(washer::ours::event(e)).is_ok();
        let next = washer::hand::next(state, e, None);
        assert_eq!(accepted, next.is_some());
        state = next.unwrap_or(state);
        machine.handle(&e);
        let ours = agent.fsm_state().name();
        assert_eq!(ours, washer::hand::leaf(state), "after {e:?}");
        assert_eq!(
            ours,
            washer::with_statig::leaf(machine.state()),
            "after {e:?}"
        );
    }
    let (mixed, _) = mixed_sequence();
    let mut agent = ours::CdCounting::new();
    let mut state = hand::State::Empty;
    let mut counts = hand::Counts::default();
    for &e in &mixed {
        let accepted = agent.cmd(ours::counting_event(e)).is_ok();
        let next = hand::next_counting(state, e, &mut counts);
        assert_eq!(accepted, next.is_some());
        state = next.unwrap_or(state);
        assert_eq!(format!("{:?}", state), agent.fsm_state().to_string());
    }
    assert_eq!(counts.plays, agent.state().plays);
    let seq = sequence();
    let mut agent = ours::CdCounting::new();
    let mut state = hand::State::Empty;
    let mut counts = hand::Counts::default();
    for &e in &seq {
        agent.cmd(ours::counting_event(e)).expect("valid");
        state = hand::next_counting(state, e, &mut counts).expect("valid");
        assert_eq!(format!("{:?}", state), agent.fsm_state().to_string());
    }
    assert_eq!(
        (counts.plays, counts.pauses, counts.track),
        (
            agent.state().plays,
            agent.state().pauses,
            agent.state().track
        )
    );
}
