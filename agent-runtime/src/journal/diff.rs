//! The differences between two JSON values, as paths: what a replay that diverged reports.

use serde_json::Value;

use crate::quote::QuotedJson;

/// How deep the comparison goes and how many differences it lists: states are user data.
const MAX_DEPTH: usize = 64;
const MAX_DIFFERENCES: usize = 20;

/// The differences between `recorded` and `replayed`, one line each: `state.total: 3 → 4`.
pub(crate) fn differences(recorded: &Value, replayed: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut path = String::new();
    walk(recorded, replayed, &mut path, 0, &mut out);
    out
}

fn walk(a: &Value, b: &Value, path: &mut String, depth: usize, out: &mut Vec<String>) {
    if out.len() >= MAX_DIFFERENCES || a == b {
        return;
    }
    let len = path.len();
    match (a, b) {
        (Value::Object(x), Value::Object(y)) if depth < MAX_DEPTH => {
            for (key, left) in x {
                push_key(path, key);
                match y.get(key) {
                    Some(right) => walk(left, right, path, depth + 1, out),
                    None => line(out, path, Some(left), None),
                }
                path.truncate(len);
            }
            for (key, right) in y.iter().filter(|(k, _)| !x.contains_key(*k)) {
                push_key(path, key);
                line(out, path, None, Some(right));
                path.truncate(len);
            }
        }
        (Value::Array(x), Value::Array(y)) if depth < MAX_DEPTH => {
            for i in 0..x.len().max(y.len()) {
                path.push_str(&format!("[{i}]"));
                match (x.get(i), y.get(i)) {
                    (Some(left), Some(right)) => walk(left, right, path, depth + 1, out),
                    (left, right) => line(out, path, left, right),
                }
                path.truncate(len);
            }
        }
        _ => line(out, path, Some(a), Some(b)),
    }
}

fn push_key(path: &mut String, key: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(key);
}

fn line(out: &mut Vec<String>, path: &str, recorded: Option<&Value>, replayed: Option<&Value>) {
    if out.len() >= MAX_DIFFERENCES {
        return;
    }
    let show = |v: Option<&Value>| match v {
        Some(v) => QuotedJson::new(v).to_string(),
        None => "(absent)".to_string(),
    };
    let at = if path.is_empty() { "the agent" } else { path };
    out.push(format!(
        "`{at}`: recorded {}, replayed {}",
        show(recorded),
        show(replayed)
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_each_differing_path() {
        let a = json!({"state": {"n": 1, "items": [1, 2], "gone": true}});
        let b = json!({"state": {"n": 2, "items": [1, 2, 3], "new": null}});
        let lines = differences(&a, &b);
        assert_eq!(lines.len(), 4, "{lines:#?}");
        assert!(
            lines[0].starts_with("`state.gone`: recorded true, replayed (absent)"),
            "{lines:#?}"
        );
        assert!(
            lines.iter().any(|l| l.starts_with("`state.items[2]`")),
            "{lines:#?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("`state.n`: recorded 1, replayed 2")),
            "{lines:#?}"
        );
        assert!(differences(&a, &a).is_empty());
    }
}
