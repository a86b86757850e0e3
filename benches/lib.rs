//! Nothing to use: this package holds Stratagem's benchmarks (`cargo bench -p stratagem-benches
//! --bench fsm`), so that the peer crates they compare against stay out of `stratagem`'s
//! dev-dependencies. The figures and the method are in `BENCHMARKS.md`.
