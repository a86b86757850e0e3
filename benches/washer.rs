//! The 3-level statechart the benchmarks share (a washing machine: `On` holds `Running`, which
//! holds `Rinse`), three ways: a Stratagem FSM agent, a hand-written nested `match` over nested
//! enums, statig's superstates; and the event streams that drive them. `benches/statechart.rs`
//! runs the valid cycle with and without actions, `benches/fsm.rs` a device's stream of mostly
//! refused events next to the flat machine's.

// Each bench uses part of it.
#![allow(dead_code)]

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
pub const CYCLE: [E; 13] = [
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
pub const EVENTS: usize = CYCLE.len() * 79;

pub fn sequence() -> Vec<E> {
    CYCLE.iter().copied().cycle().take(EVENTS).collect()
}

const ALL: [E; 5] = [E::Power, E::Start, E::Stop, E::Next, E::Again];

/// A device's stream: `EVENTS` events of which three in four are refused in the state the
/// machine is in when they arrive (a fixed-seed generator, as the flat machine's in
/// `benches/fsm.rs`); the accepted ones walk every level. Returns the events and how many are
/// refused.
pub fn mixed_sequence() -> (Vec<E>, usize) {
    stratagem_benches::device_stream(&ALL, hand::State::Off, EVENTS, |s, e| {
        hand::next(s, e, None)
    })
}

// ---- ours -----------------------------------------------------------------------------------

pub mod ours {
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

pub mod hand {
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

pub mod with_statig {
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
