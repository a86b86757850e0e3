//! Behaviour trees at the compiler's limits go through rustc with its default limits and run:
//! a composite of 1,024 children (generated as balanced groups of 8, not one list as deep as the
//! composite is wide), and decorators and sequences nested as deeply as the generated types may
//! be (`E0409` stops one level further). Wider trees (10,000 children) are
//! checked through `Builder` and syn in `dsl/tests/extremes.rs`, where they cost no rustc time.

use stratagem::bt::TreeRun;
use stratagem::prelude::*;

#[agent(strategy = BehaviorTree, tree = Deepest)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Counter {
    bumps: u32,
}

/// Counts, so a test sees every child run.
#[action]
fn bump(counter: &mut Counter) {
    counter.bumps += 1;
}

/// `bt!` with `$body` as the behaviour `Wide`'s sequence, doubled once per `x`.
macro_rules! wide {
    ([$($acc:tt)*] []) => {
        bt! { for Counter behavior Wide { sequence { $($acc)* } } }
    };
    ([$($acc:tt)*] [x $($rest:tt)*]) => {
        wide!([$($acc)* $($acc)*] [$($rest)*]);
    };
}

// 2^10 = 1,024 children.
wide!([action bump] [x x x x x x x x x x]);

bt! {
    for Counter
    behavior Nested { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { invert { action bump } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } }
}

bt! {
    for Counter
    behavior Deepest { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { sequence { action bump } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } } }
}

/// Ticks behaviour `B` once on a fresh counter: the bumps it made and the tree's status.
fn tick_once<B: bt::Behavior<Counter>>() -> (u32, bt::Status) {
    struct Tick<'a>(&'a mut Counter);
    impl<T: bt::NodeState> bt::TreeVisitor<Counter, T> for Tick<'_> {
        type Output = bt::Status;
        fn visit<N: bt::Node<Counter, State = T>>(self, tree: &N) -> bt::Status {
            TreeRun::default()
                .tick(tree, self.0, std::time::Duration::ZERO)
                .status
        }
    }
    let mut counter = Counter::default();
    let status = B::with_tree(Tick(&mut counter));
    (counter.bumps, status)
}

#[test]
fn a_composite_of_a_thousand_children_runs_each_once_in_order() {
    assert_eq!(tick_once::<Wide>(), (1024, bt::Status::Success));
}

#[test]
fn trees_at_the_depth_limits_compile_and_run() {
    // 117 `invert`s (types nest 120 deep): an odd count fails the bump's success.
    assert_eq!(tick_once::<Nested>(), (1, bt::Status::Failure));
    assert_eq!(tick_once::<Deepest>(), (1, bt::Status::Success));
    // The agent holds the deepest tree's progress in its own state.
    let mut agent = Agent::new(Counter::default());
    agent.tick();
    assert_eq!(agent.state().bumps, 1);
}
