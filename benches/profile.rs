//! Running one benchmark's loop a fixed number of times, for `valgrind --tool=callgrind`:
//! `STRATAGEM_PROFILE=fsm/with_actions/stratagem:20000 valgrind --tool=callgrind <bench binary>`
//! runs that loop 20,000 times, no other benchmark and no criterion, then exits. Two counts
//! at different numbers of passes give the instructions of one pass, independent of the load
//! (BENCHMARKS.md, "instructions per event").

use std::hint::black_box;

use criterion::measurement::WallTime;
use criterion::{Bencher, BenchmarkGroup};

/// What a benchmark's closure iterates with: criterion's `Bencher`, or the profile's loop.
pub enum Iter<'a, 'b> {
    /// Timed by criterion.
    Timed(&'a mut Bencher<'b>),
    /// Run this many times, untimed.
    Passes(u64),
}

impl Iter<'_, '_> {
    /// Runs `routine` as criterion's `Bencher::iter` does, or the profile's number of times.
    pub fn iter<O>(&mut self, mut routine: impl FnMut() -> O) {
        match self {
            Iter::Timed(bencher) => bencher.iter(routine),
            Iter::Passes(passes) => {
                for _ in 0..*passes {
                    black_box(routine());
                }
            }
        }
    }

    /// Runs `routine` as criterion's `Bencher::iter_custom` does (it runs the loop itself
    /// and returns the time it took), or once for the profile's number of passes.
    #[allow(dead_code)] // only benches that time their own loop (`journal.rs`) call it
    pub fn iter_custom(&mut self, mut routine: impl FnMut(u64) -> std::time::Duration) {
        match self {
            Iter::Timed(bencher) => bencher.iter_custom(routine),
            Iter::Passes(passes) => {
                black_box(routine(*passes));
            }
        }
    }
}

/// `group.bench_function(name, f)`, unless `STRATAGEM_PROFILE` is set: then only the
/// benchmark it names (`<group>/<name>:<passes>`) runs, its loop that many times, and the
/// process exits.
pub fn bench(
    group: &mut BenchmarkGroup<'_, WallTime>,
    group_name: &str,
    name: &str,
    mut f: impl FnMut(&mut Iter<'_, '_>),
) {
    match std::env::var("STRATAGEM_PROFILE") {
        Ok(request) => {
            let (id, passes) = request.rsplit_once(':').unwrap_or((&request, "1"));
            if id == format!("{group_name}/{name}") {
                f(&mut Iter::Passes(
                    passes.parse().expect("a number of passes"),
                ));
                std::process::exit(0);
            }
        }
        Err(_) => {
            group.bench_function(name, |b| f(&mut Iter::Timed(b)));
        }
    }
}
