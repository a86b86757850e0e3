//! Payloads as the page shows them: long strings cut, long lists and objects shortened, deep
//! nesting elided, each cut saying how much it left out.

use serde_json::{Map, Value};

/// How much of a payload the inspector shows.
///
/// ```
/// use agent_inspector::Truncation;
/// let cut = Truncation { max_string: 5, max_items: 2, max_depth: 4 };
/// let value = serde_json::json!({"text": "abcdefgh", "list": [1, 2, 3]});
/// assert_eq!(
///     cut.apply(&value),
///     serde_json::json!({"text": "abcde… (+3 chars)", "list": [1, 2, "… (+1 items)"]}),
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Truncation {
    /// Characters kept of a string.
    pub max_string: usize,
    /// Items kept of an array, entries of an object.
    pub max_items: usize,
    /// Levels of nesting kept; deeper values become `"…"`.
    pub max_depth: usize,
}

impl Default for Truncation {
    /// 300 characters, 50 items, 8 levels.
    fn default() -> Self {
        Truncation {
            max_string: 300,
            max_items: 50,
            max_depth: 8,
        }
    }
}

impl Truncation {
    /// A copy of `value` cut to these limits. The walk is bounded by `max_depth`.
    pub fn apply(&self, value: &Value) -> Value {
        self.cut(value, 0)
    }

    fn cut(&self, value: &Value, depth: usize) -> Value {
        match value {
            Value::String(text) => Value::String(self.cut_str(text)),
            Value::Array(_) | Value::Object(_) if depth >= self.max_depth => "…".into(),
            Value::Array(items) => {
                let mut out: Vec<Value> = items
                    .iter()
                    .take(self.max_items)
                    .map(|item| self.cut(item, depth + 1))
                    .collect();
                if items.len() > self.max_items {
                    out.push(format!("… (+{} items)", items.len() - self.max_items).into());
                }
                Value::Array(out)
            }
            Value::Object(entries) => {
                let mut out: Map<String, Value> = entries
                    .iter()
                    .take(self.max_items)
                    .map(|(key, item)| (self.cut_str(key), self.cut(item, depth + 1)))
                    .collect();
                if entries.len() > self.max_items {
                    out.insert(
                        "…".into(),
                        format!("+{} entries", entries.len() - self.max_items).into(),
                    );
                }
                Value::Object(out)
            }
            other => other.clone(),
        }
    }

    fn cut_str(&self, text: &str) -> String {
        match text.char_indices().nth(self.max_string) {
            None => text.to_string(),
            Some((end, _)) => {
                let left = text[end..].chars().count();
                format!("{}… (+{left} chars)", &text[..end])
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deep_values_are_elided_and_short_ones_kept() {
        let cut = Truncation {
            max_string: 10,
            max_items: 10,
            max_depth: 2,
        };
        assert_eq!(
            cut.apply(&json!({"a": {"b": {"c": 1}}, "n": 1.5, "s": "héllo"})),
            json!({"a": {"b": "…"}, "n": 1.5, "s": "héllo"})
        );
    }

    #[test]
    fn strings_are_cut_on_character_boundaries() {
        let cut = Truncation {
            max_string: 2,
            max_items: 1,
            max_depth: 1,
        };
        assert_eq!(cut.apply(&json!("ééé")), json!("éé… (+1 chars)"));
        assert_eq!(
            cut.apply(&json!({"a": 1, "b": 2})),
            json!({"a": 1, "…": "+1 entries"})
        );
    }
}
