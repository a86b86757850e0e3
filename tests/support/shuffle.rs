//! A small deterministic shuffle (xorshift) for tests that answer interrupts in a random but
//! reproducible order.

/// Shuffles `items` with `seed`: the same seed gives the same order, so a failure replays.
pub fn shuffle<T>(items: &mut [T], mut seed: u64) {
    for i in (1..items.len()).rev() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        items.swap(i, (seed % (i as u64 + 1)) as usize);
    }
}
