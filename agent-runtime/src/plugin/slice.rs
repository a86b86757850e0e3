//! The plugins' state slices inside an agent, type-erased so that `Agent<S>` keeps them side
//! by side and a checkpoint holds them as `{"plugins": {key: state}}`.

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;
use serde_json::Value;

/// One plugin's state, whatever its type.
pub trait PluginSlice: Any + Send + Sync + fmt::Debug {
    /// The state as JSON (for checkpoints).
    fn to_json(&self) -> Result<Value, serde_json::Error>;
    /// A copy.
    fn clone_slice(&self) -> Box<dyn PluginSlice>;
    /// For downcasting to the plugin's `State`.
    fn as_any(&self) -> &dyn Any;
    /// For downcasting to the plugin's `State`, mutably.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T> PluginSlice for T
where
    T: Clone + fmt::Debug + Serialize + Send + Sync + 'static,
{
    fn to_json(&self) -> Result<Value, serde_json::Error> {
        serde_json::to_value(self)
    }
    fn clone_slice(&self) -> Box<dyn PluginSlice> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// The state slices of an agent's plugins, in mount order (one per plugin of its
/// [`PluginStack`](super::PluginStack)).
#[derive(Debug, Default)]
pub struct PluginStates {
    pub(crate) slices: Vec<(&'static str, Box<dyn PluginSlice>)>,
}

impl PluginStates {
    /// Whether there are none (an agent without plugins).
    pub fn is_empty(&self) -> bool {
        self.slices.is_empty()
    }

    /// The slice stored under `key`.
    pub fn get(&self, key: &str) -> Option<&dyn PluginSlice> {
        self.slices
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, s)| &**s)
    }

    /// The slices as `{key: state}` JSON.
    pub fn to_json(&self) -> Result<Value, serde_json::Error> {
        let mut map = serde_json::Map::new();
        for (key, slice) in &self.slices {
            map.insert((*key).to_string(), slice.to_json()?);
        }
        Ok(Value::Object(map))
    }
}

impl Clone for PluginStates {
    fn clone(&self) -> Self {
        PluginStates {
            slices: self
                .slices
                .iter()
                .map(|(k, s)| (*k, s.clone_slice()))
                .collect(),
        }
    }
}

impl PartialEq for PluginStates {
    fn eq(&self, other: &Self) -> bool {
        self.slices.len() == other.slices.len() && self.to_json().ok() == other.to_json().ok()
    }
}

impl Serialize for PluginStates {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeMap};
        let mut map = s.serialize_map(Some(self.slices.len()))?;
        for (key, slice) in &self.slices {
            map.serialize_entry(key, &slice.to_json().map_err(S::Error::custom)?)?;
        }
        map.end()
    }
}

/// What a checkpoint holds for the plugins, before the stack types it.
pub(crate) type SavedStates = BTreeMap<String, Value>;
