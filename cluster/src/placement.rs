//! Where agents run: agent ids hash to shards, shards go to nodes.

use std::collections::BTreeMap;

/// FNV-1a: stable across processes, machines and Rust versions (the std hasher is not),
/// which every node must agree on.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// MurmurHash3's finalizer: FNV alone barely mixes keys that differ in one byte, and
/// rendezvous hashing needs every bit of the score to depend on the node and the shard.
fn mix(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// The shard an agent id belongs to.
pub fn shard_of(agent_id: &str, shards: u32) -> u32 {
    (mix(fnv1a(agent_id.as_bytes())) % u64::from(shards.max(1))) as u32
}

/// How shards are spread over the live nodes.
///
/// A shard is a slice of the agent id space with its own JetStream consumer; every agent of a
/// shard runs on the node that holds the shard's lease.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Placement {
    /// Consistent (rendezvous) hashing over the live nodes: when a node joins or leaves, only
    /// the shards it gains or loses move.
    #[default]
    ConsistentHashing,
    /// Shards pinned to named nodes; a shard whose node is not live (or that is not listed)
    /// falls back to consistent hashing over the live nodes.
    Explicit(BTreeMap<u32, String>),
}

impl Placement {
    /// The node that should hold `shard` among `live` nodes (sorted or not), if any is live.
    pub fn owner<'a>(&self, shard: u32, live: &'a [String]) -> Option<&'a str> {
        if let Placement::Explicit(pins) = self
            && let Some(node) = pins.get(&shard)
            && let Some(live) = live.iter().find(|n| *n == node)
        {
            return Some(live);
        }
        live.iter()
            .max_by_key(|node| {
                let mut key = node.as_bytes().to_vec();
                key.extend_from_slice(&shard.to_be_bytes());
                (mix(fnv1a(&key)), node.as_str())
            })
            .map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consistent_hashing_moves_only_what_it_must() {
        let two = vec!["a".to_string(), "b".to_string()];
        let three = vec!["a".to_string(), "b".to_string(), "c".to_string()];
        let p = Placement::ConsistentHashing;
        let mut moved = 0;
        for shard in 0..64 {
            let before = p.owner(shard, &two).unwrap();
            let after = p.owner(shard, &three).unwrap();
            if before != after {
                assert_eq!(after, "c", "a shard moved between the old nodes");
                moved += 1;
            }
        }
        // About a third of the shards move to the new node, none between the old ones.
        assert!((10..=32).contains(&moved), "{moved} of 64 shards moved");
        assert_eq!(p.owner(3, &[]), None);
    }

    #[test]
    fn explicit_pins_win_while_their_node_lives() {
        let p = Placement::Explicit(BTreeMap::from([(0, "b".to_string())]));
        let live = vec!["a".to_string(), "b".to_string()];
        assert_eq!(p.owner(0, &live), Some("b"));
        assert_eq!(p.owner(0, &live[..1]), Some("a"));
    }

    #[test]
    fn shards_are_stable() {
        assert_eq!(shard_of("order-17", 32), shard_of("order-17", 32));
        assert!(shard_of("order-17", 32) < 32);
        assert_eq!(shard_of("x", 0), 0);
    }
}
