//! Base64 (RFC 4648, standard alphabet, padded) for `data_base64`: small enough not to be a
//! dependency of the default build.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Encodes bytes with padding.
pub(crate) fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(chunk.get(1).copied().unwrap_or(0)) << 8)
            | u32::from(chunk.get(2).copied().unwrap_or(0));
        let sextets = [n >> 18, n >> 12, n >> 6, n];
        for (i, s) in sextets.iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(*s & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn sextet(c: u8) -> Option<u32> {
    Some(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    } as u32)
}

/// Decodes padded base64; the reason when it is not (position of the first bad byte).
pub(crate) fn decode(text: &str) -> Result<Vec<u8>, String> {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return Err(format!(
            "base64 comes in groups of 4 characters; {} is not a multiple of 4",
            bytes.len()
        ));
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    let groups = bytes.len() / 4;
    for (g, group) in bytes.chunks(4).enumerate() {
        let last = g + 1 == groups;
        let pad = if last {
            group.iter().rev().take_while(|c| **c == b'=').count()
        } else {
            0
        };
        if pad > 2 {
            return Err(format!("too much `=` padding at character {}", g * 4 + 1));
        }
        let mut n = 0u32;
        for (i, c) in group[..4 - pad].iter().enumerate() {
            let s = sextet(*c).ok_or_else(|| {
                format!(
                    "{:?} at character {} is not base64",
                    char::from(*c),
                    g * 4 + i
                )
            })?;
            n |= s << (18 - 6 * i);
        }
        let decoded = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        // Bits below the last full byte must be zero, or two texts would mean the same bytes.
        if (pad == 1 && decoded[2] != 0) || (pad == 2 && (decoded[1] != 0 || decoded[2] != 0)) {
            return Err(format!(
                "non-zero padding bits at character {}",
                g * 4 + 3 - pad
            ));
        }
        out.extend_from_slice(&decoded[..3 - pad]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn rfc_4648_vectors() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(encode(plain.as_bytes()), coded);
            assert_eq!(decode(coded).unwrap(), plain.as_bytes());
        }
    }

    #[test]
    fn malformed_text_is_refused() {
        for bad in [
            "Zg", "Zg=", "Z===", "Zm9v!A==", "Zh==", "Zm9=", "Zg==Zg==", "Zm 9v",
        ] {
            assert!(decode(bad).is_err(), "{bad}");
        }
    }

    proptest! {
        #[test]
        fn round_trips(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            prop_assert_eq!(decode(&encode(&bytes)).unwrap(), bytes);
        }
    }
}
