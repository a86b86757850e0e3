//! "Did you mean" suggestions.

use crate::limits::LISTED_NAMES;

/// The candidate closest to `name` by edit distance, if it is close enough to be a likely typo
/// (at most a third of the name's length, and at least one edit allowed). The cost is bounded:
/// names longer than [`MAX_NAME`] get no suggestion, candidates whose length alone rules them out
/// are skipped, and at most [`MAX_CANDIDATES`] are compared.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let len = name.chars().count();
    if len > MAX_NAME {
        return None;
    }
    let limit = (len / 3).max(1);
    candidates
        .into_iter()
        .filter(|c| *c != name && c.chars().count().abs_diff(len) <= limit)
        .take(MAX_CANDIDATES)
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Longer names are not typos worth a suggestion (and would cost their length squared).
pub const MAX_NAME: usize = 64;

/// How many candidates of a plausible length one suggestion compares at most.
pub const MAX_CANDIDATES: usize = 1000;

/// A "did you mean" help line, if a candidate is close.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    closest(name, candidates).map(|c| format!("did you mean `{c}`?"))
}

/// Damerau-Levenshtein distance over chars (optimal string alignment): insertions, deletions,
/// substitutions, and transpositions of neighbours (`Opne` is one edit from `Open`).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rows: the one two above, the one above, this one.
    let mut above2: Vec<usize> = vec![0; b.len() + 1];
    let mut above: Vec<usize> = (0..=b.len()).collect();
    let mut row: Vec<usize> = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        row[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (above[j] + 1).min(row[j - 1] + 1).min(above[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(above2[j - 2] + 1);
            }
        }
        std::mem::swap(&mut above2, &mut above);
        std::mem::swap(&mut above, &mut row);
    }
    above[b.len()]
}

/// `` `a`, `b` or `c` `` for messages; past [`LISTED_NAMES`] names, the first ones and
/// "or N more", so a list of 100,000 actions stays one short line.
pub fn list(items: &[&str]) -> String {
    let shown = items.len().min(LISTED_NAMES);
    let quoted: Vec<String> = items[..shown].iter().map(|i| format!("`{i}`")).collect();
    if items.len() > shown {
        return format!("{} or {} more", quoted.join(", "), items.len() - shown);
    }
    match quoted.as_slice() {
        [] => "none".to_string(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(closest("chrage", ["charge", "refund"]), Some("charge"));
        assert_eq!(closest("ship", ["charge", "refund"]), None);
        assert_eq!(closest("Pendng", ["Pending", "Paid"]), Some("Pending"));
        assert_eq!(list(&["a", "b", "c"]), "`a`, `b` or `c`");
        let many: Vec<String> = (0..1000).map(|i| format!("a{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(
            list(&many).ends_with("`a15` or 984 more"),
            "{}",
            list(&many)
        );
        // Transposed letters are one edit.
        assert_eq!(edit_distance("Opne", "Open"), 1);
        assert_eq!(edit_distance("ab", "ba"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(closest("Opne", ["Open", "Closed"]), Some("Open"));
        // Bounded: a huge name gets no suggestion.
        assert_eq!(closest(&"a".repeat(1 << 20), ["a"]), None);
    }
}
