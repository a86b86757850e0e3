//! State operations: changes an action returns besides mutating the state directly.
//!
//! The typed state is serialized to JSON, the operations are applied in order, and the result is
//! deserialized back. If any step fails the whole set fails and the state is left as it was, so an
//! operation can never leave the agent with a state its type cannot hold.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{ActionError, ActionErrorKind};

/// A dotted path into the state (`"customer.address.city"`); numeric segments index arrays.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StatePath(Vec<String>);

impl StatePath {
    /// The segments of the path.
    pub fn segments(&self) -> &[String] {
        &self.0
    }
}

impl From<&str> for StatePath {
    fn from(path: &str) -> Self {
        StatePath(path.split('.').map(str::to_string).collect())
    }
}

impl From<String> for StatePath {
    fn from(path: String) -> Self {
        StatePath::from(path.as_str())
    }
}

impl<S: Into<String>> From<Vec<S>> for StatePath {
    fn from(segments: Vec<S>) -> Self {
        StatePath(segments.into_iter().map(Into::into).collect())
    }
}

impl std::fmt::Display for StatePath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.join("."))
    }
}

/// One change to the agent's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum StateOp {
    /// Deep-merges an object into the state: objects merge key by key, anything else replaces.
    Set {
        /// The object to merge.
        value: Value,
    },
    /// Replaces the whole state.
    Replace {
        /// The new state.
        value: Value,
    },
    /// Removes top-level keys (a removed field takes its serde default, `None` for `Option`).
    DeleteKeys {
        /// The keys to remove.
        keys: Vec<String>,
    },
    /// Sets the value at a path, creating intermediate objects.
    SetPath {
        /// Where.
        path: StatePath,
        /// What.
        value: Value,
    },
    /// Removes the value at a path; a missing path is not an error.
    DeletePath {
        /// Where.
        path: StatePath,
    },
}

impl StateOp {
    /// Applies this operation to a JSON document.
    pub fn apply(&self, doc: &mut Value) -> Result<(), String> {
        match self {
            StateOp::Set { value } => {
                deep_merge(doc, value.clone());
                Ok(())
            }
            StateOp::Replace { value } => {
                *doc = value.clone();
                Ok(())
            }
            StateOp::DeleteKeys { keys } => {
                let obj = doc
                    .as_object_mut()
                    .ok_or("delete keys needs the state to be an object")?;
                for key in keys {
                    obj.remove(key);
                }
                Ok(())
            }
            StateOp::SetPath { path, value } => set_path(doc, path, value.clone()),
            StateOp::DeletePath { path } => {
                delete_path(doc, path);
                Ok(())
            }
        }
    }
}

/// Deep merge: objects merge recursively; any other value replaces what was there.
pub fn deep_merge(target: &mut Value, patch: Value) {
    match (target, patch) {
        (Value::Object(target), Value::Object(patch)) => {
            for (key, value) in patch {
                match target.get_mut(&key) {
                    Some(existing) => deep_merge(existing, value),
                    None => {
                        target.insert(key, value);
                    }
                }
            }
        }
        (target, patch) => *target = patch,
    }
}

fn set_path(doc: &mut Value, path: &StatePath, value: Value) -> Result<(), String> {
    let Some((last, parents)) = path.segments().split_last() else {
        *doc = value;
        return Ok(());
    };
    let mut node = doc;
    for (depth, seg) in parents.iter().enumerate() {
        node = match node {
            Value::Object(map) => map
                .entry(seg.clone())
                .or_insert_with(|| Value::Object(Map::new())),
            Value::Array(items) => {
                let index = array_index(seg, items.len(), path, depth)?;
                &mut items[index]
            }
            Value::Null => {
                *node = Value::Object(Map::new());
                node.as_object_mut()
                    .expect("just made an object")
                    .entry(seg.clone())
                    .or_insert_with(|| Value::Object(Map::new()))
            }
            other => {
                let at = match depth {
                    0 => "the state".to_string(),
                    _ => format!("`{}`", path.segments()[..depth].join(".")),
                };
                return Err(format!(
                    "cannot set `{path}`: {at} is {}, not an object",
                    kind_of(other)
                ));
            }
        };
    }
    match node {
        Value::Object(map) => {
            map.insert(last.clone(), value);
            Ok(())
        }
        Value::Array(items) => {
            let index = array_index(last, items.len(), path, parents.len())?;
            items[index] = value;
            Ok(())
        }
        Value::Null => {
            let mut map = Map::new();
            map.insert(last.clone(), value);
            *node = Value::Object(map);
            Ok(())
        }
        other => Err(format!(
            "cannot set `{path}`: its parent is {}, not an object",
            kind_of(other)
        )),
    }
}

fn delete_path(doc: &mut Value, path: &StatePath) {
    let Some((last, parents)) = path.segments().split_last() else {
        return;
    };
    let mut node = doc;
    for seg in parents {
        node = match node {
            Value::Object(map) => match map.get_mut(seg) {
                Some(next) => next,
                None => return,
            },
            Value::Array(items) => match seg.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                Some(next) => next,
                None => return,
            },
            _ => return,
        };
    }
    match node {
        Value::Object(map) => {
            map.remove(last);
        }
        Value::Array(items) => {
            if let Some(i) = last.parse::<usize>().ok().filter(|i| *i < items.len()) {
                items.remove(i);
            }
        }
        _ => {}
    }
}

fn array_index(seg: &str, len: usize, path: &StatePath, depth: usize) -> Result<usize, String> {
    match seg.parse::<usize>() {
        Ok(i) if i < len => Ok(i),
        _ => Err(format!(
            "cannot set `{path}`: `{}` is not an index of an array of {len}",
            path.segments()[..=depth].join(".")
        )),
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Applies `ops` to `state` all or nothing.
///
/// On error `state` is untouched and the error says which operation failed and why.
pub fn apply_ops<S: Serialize + DeserializeOwned>(
    state: &mut S,
    ops: &[StateOp],
) -> Result<(), ActionError> {
    if ops.is_empty() {
        return Ok(());
    }
    let fail = |msg: String| ActionError::with_kind(ActionErrorKind::StateOp, msg);
    let mut doc = serde_json::to_value(&*state)
        .map_err(|e| fail(format!("state does not serialize to JSON: {e}")))?;
    for (i, op) in ops.iter().enumerate() {
        op.apply(&mut doc)
            .map_err(|e| fail(format!("state op #{} failed: {e}", i + 1)))?;
    }
    *state = serde_json::from_value(doc)
        .map_err(|e| fail(format!("state ops left a state of the wrong shape: {e}")))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct Profile {
        name: String,
        address: Address,
        tags: Vec<String>,
        nickname: Option<String>,
        #[serde(default)]
        visits: u32,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct Address {
        city: String,
        zip: String,
    }

    fn profile() -> Profile {
        Profile {
            name: "Ada".into(),
            address: Address {
                city: "London".into(),
                zip: "N1".into(),
            },
            tags: vec!["a".into(), "b".into()],
            nickname: Some("countess".into()),
            visits: 3,
        }
    }

    #[test]
    fn set_deep_merges_nested_objects() {
        let mut p = profile();
        apply_ops(
            &mut p,
            &[StateOp::Set {
                value: json!({"address": {"city": "Paris"}}),
            }],
        )
        .unwrap();
        assert_eq!(p.address.city, "Paris");
        assert_eq!(p.address.zip, "N1", "sibling keys survive a deep merge");
        assert_eq!(p.name, "Ada");
    }

    #[test]
    fn set_replaces_non_objects() {
        let mut p = profile();
        apply_ops(
            &mut p,
            &[StateOp::Set {
                value: json!({"tags": ["z"]}),
            }],
        )
        .unwrap();
        assert_eq!(
            p.tags,
            vec!["z".to_string()],
            "arrays are replaced, not merged"
        );
    }

    #[test]
    fn replace_swaps_the_whole_state() {
        let mut p = profile();
        let mut other = profile();
        other.name = "Grace".into();
        apply_ops(
            &mut p,
            &[StateOp::Replace {
                value: serde_json::to_value(&other).unwrap(),
            }],
        )
        .unwrap();
        assert_eq!(p, other);
    }

    #[test]
    fn delete_keys_falls_back_to_defaults() {
        let mut p = profile();
        apply_ops(
            &mut p,
            &[StateOp::DeleteKeys {
                keys: vec!["nickname".into(), "visits".into()],
            }],
        )
        .unwrap();
        assert_eq!(p.nickname, None);
        assert_eq!(p.visits, 0);
    }

    #[test]
    fn delete_of_a_required_key_fails_and_changes_nothing() {
        let mut p = profile();
        let err = apply_ops(
            &mut p,
            &[StateOp::DeleteKeys {
                keys: vec!["name".into()],
            }],
        )
        .unwrap_err();
        assert_eq!(err.kind(), ActionErrorKind::StateOp);
        assert!(err.message().contains("missing field `name`"), "{err}");
        assert_eq!(p, profile());
    }

    #[test]
    fn set_path_reaches_nested_fields_and_array_items() {
        let mut p = profile();
        apply_ops(
            &mut p,
            &[
                StateOp::SetPath {
                    path: "address.zip".into(),
                    value: json!("E2"),
                },
                StateOp::SetPath {
                    path: "tags.1".into(),
                    value: json!("B"),
                },
            ],
        )
        .unwrap();
        assert_eq!(p.address.zip, "E2");
        assert_eq!(p.tags, vec!["a".to_string(), "B".to_string()]);
    }

    #[test]
    fn set_path_creates_intermediate_objects() {
        let mut doc = json!({});
        StateOp::SetPath {
            path: "a.b.c".into(),
            value: json!(1),
        }
        .apply(&mut doc)
        .unwrap();
        assert_eq!(doc, json!({"a": {"b": {"c": 1}}}));
    }

    #[test]
    fn set_path_through_a_scalar_is_an_error() {
        let mut doc = json!({"a": 5});
        let err = StateOp::SetPath {
            path: "a.b".into(),
            value: json!(1),
        }
        .apply(&mut doc)
        .unwrap_err();
        assert_eq!(
            err,
            "cannot set `a.b`: its parent is a number, not an object"
        );
        let err = StateOp::SetPath {
            path: "a.b.c".into(),
            value: json!(1),
        }
        .apply(&mut doc)
        .unwrap_err();
        assert_eq!(err, "cannot set `a.b.c`: `a` is a number, not an object");
    }

    #[test]
    fn delete_path_removes_leaves_and_ignores_missing_paths() {
        let mut p = profile();
        apply_ops(
            &mut p,
            &[
                StateOp::DeletePath {
                    path: "nickname".into(),
                },
                StateOp::DeletePath {
                    path: "tags.0".into(),
                },
                StateOp::DeletePath {
                    path: "no.such.path".into(),
                },
            ],
        )
        .unwrap();
        assert_eq!(p.nickname, None);
        assert_eq!(p.tags, vec!["b".to_string()]);
    }

    #[test]
    fn ops_are_all_or_nothing() {
        let mut p = profile();
        let err = apply_ops(
            &mut p,
            &[
                StateOp::Set {
                    value: json!({"name": "Grace"}),
                },
                StateOp::Set {
                    value: json!({"visits": "many"}),
                },
            ],
        )
        .unwrap_err();
        assert!(err.message().contains("wrong shape"), "{err}");
        assert_eq!(p.name, "Ada", "the first op is rolled back too");
    }
}
