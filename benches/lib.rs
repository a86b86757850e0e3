//! This package holds Stratagem's benchmarks (`cargo bench -p stratagem-benches --bench fsm`),
//! so that the peer crates they compare against stay out of `stratagem`'s dev-dependencies;
//! the library only has what several benches share. The figures and the method are in
//! `BENCHMARKS.md`.

/// A device's stream: `len` events of which about three in four are refused in the state the
/// machine is in when they arrive, the accepted ones walking the machine. The events come
/// from a fixed-seed generator, so every run and every implementation sees the same stream;
/// `next` is the machine (the state an event leads to, `None` when it is refused). Returns the
/// events and how many of them are refused.
pub fn device_stream<S: Copy, E: Copy>(
    all: &[E],
    initial: S,
    len: usize,
    next: impl Fn(S, E) -> Option<S>,
) -> (Vec<E>, usize) {
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut draw = |n: usize| {
        // xorshift64*: deterministic, no dependency.
        seed ^= seed >> 12;
        seed ^= seed << 25;
        seed ^= seed >> 27;
        (seed.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
    };
    let mut state = initial;
    let (mut events, mut refused) = (Vec::with_capacity(len), 0);
    while events.len() < len {
        let accept = draw(4) == 0;
        let candidates: Vec<E> = all
            .iter()
            .copied()
            .filter(|&e| next(state, e).is_some() == accept)
            .collect();
        let e = candidates[draw(candidates.len())];
        match next(state, e) {
            Some(to) => state = to,
            None => refused += 1,
        }
        events.push(e);
    }
    (events, refused)
}
