//! Finding items declared twice in one pass: each repeat with the first item of its key.

use std::collections::HashMap;
use std::hash::Hash;

/// Each item whose key an earlier item had, paired with that first item, in order. One pass over
/// a map, so 100,000 items cost 100,000 lookups, not five billion comparisons.
pub fn repeats<'a, T, K: Hash + Eq>(
    items: impl IntoIterator<Item = &'a T>,
    key: impl Fn(&'a T) -> K,
) -> Vec<(&'a T, &'a T)> {
    let mut first: HashMap<K, &'a T> = HashMap::new();
    let mut out = Vec::new();
    for item in items {
        match first.entry(key(item)) {
            std::collections::hash_map::Entry::Occupied(seen) => out.push((item, *seen.get())),
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(item);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_pair_with_their_first() {
        let items = ["a", "b", "a", "c", "a"];
        let found: Vec<(&&str, &&str)> = repeats(&items, |s| *s);
        assert_eq!(found.len(), 2);
        assert!(
            found
                .iter()
                .all(|(r, f)| std::ptr::eq(*f, &items[0]) && **r == "a")
        );
        assert!(std::ptr::eq(found[0].0, &items[2]));
    }
}
