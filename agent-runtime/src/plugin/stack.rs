//! The plugins an agent type mounts, in mount order, and the runtime side of the plugin
//! contract: routes, hooks and actions over the agent's [`PluginStates`].

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

use serde_json::Value;

use super::slice::{PluginSlice, PluginStates, SavedStates};
use super::{Flow, Plugin, PluginCall, ToolDone};
use crate::directive::Directive;
use crate::error::ActionError;
use crate::route::{RouteError, RouteSpec, RouteTarget};
use crate::signal::Signal;

/// A plugin with its configuration, type-erased (implemented for every [`Plugin`]).
pub trait DynPlugin: Send + Sync + fmt::Debug {
    /// [`Plugin::NAME`].
    fn name(&self) -> &'static str;
    /// [`Plugin::STATE_KEY`].
    fn state_key(&self) -> &'static str;
    /// The configuration as JSON.
    fn config(&self) -> Value;
    /// [`Plugin::mount`].
    fn mount(&self) -> Box<dyn PluginSlice>;
    /// A saved state, typed.
    fn restore(&self, saved: Value) -> Result<Box<dyn PluginSlice>, serde_json::Error>;
    /// [`Plugin::routes`].
    fn routes(&self) -> Vec<super::PluginRoute>;
    /// [`Plugin::before_route`] on its slice.
    fn before_route(&self, slice: &mut dyn PluginSlice, signal: &mut Cow<'_, Signal>) -> Flow;
    /// [`Plugin::changes_model_replies`].
    fn changes_model_replies(&self) -> bool;
    /// [`Plugin::hears_ai_events`].
    fn hears_ai_events(&self) -> bool;
    /// [`Plugin::after_emit`] on its slice.
    fn after_emit(&self, slice: &mut dyn PluginSlice, signal: &mut Signal);
    /// [`Plugin::awaits_tool`] on its slice.
    fn awaits_tool(&self, slice: &dyn PluginSlice, id: &str) -> bool;
    /// [`Plugin::tool_completed`] on its slice.
    fn tool_completed(&self, slice: &mut dyn PluginSlice, done: ToolDone<'_>) -> Vec<Directive>;
    /// [`Plugin::run`] on its slice.
    fn run(
        &self,
        slice: &mut dyn PluginSlice,
        call: PluginCall<'_>,
    ) -> Result<Vec<Directive>, ActionError>;
}

impl<P: Plugin> DynPlugin for P {
    fn name(&self) -> &'static str {
        P::NAME
    }
    fn state_key(&self) -> &'static str {
        P::STATE_KEY
    }
    fn config(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
    fn mount(&self) -> Box<dyn PluginSlice> {
        Box::new(Plugin::mount(self))
    }
    fn restore(&self, saved: Value) -> Result<Box<dyn PluginSlice>, serde_json::Error> {
        Ok(Box::new(serde_json::from_value::<P::State>(saved)?))
    }
    fn routes(&self) -> Vec<super::PluginRoute> {
        Plugin::routes(self)
    }
    fn before_route(&self, slice: &mut dyn PluginSlice, signal: &mut Cow<'_, Signal>) -> Flow {
        match slice.as_any_mut().downcast_mut::<P::State>() {
            Some(state) => Plugin::before_route(self, state, signal),
            None => Flow::Continue,
        }
    }
    fn changes_model_replies(&self) -> bool {
        Plugin::changes_model_replies(self)
    }
    fn hears_ai_events(&self) -> bool {
        Plugin::hears_ai_events(self)
    }
    fn after_emit(&self, slice: &mut dyn PluginSlice, signal: &mut Signal) {
        if let Some(state) = slice.as_any_mut().downcast_mut::<P::State>() {
            Plugin::after_emit(self, state, signal);
        }
    }
    fn awaits_tool(&self, slice: &dyn PluginSlice, id: &str) -> bool {
        slice
            .as_any()
            .downcast_ref::<P::State>()
            .is_some_and(|state| Plugin::awaits_tool(self, state, id))
    }
    fn tool_completed(&self, slice: &mut dyn PluginSlice, done: ToolDone<'_>) -> Vec<Directive> {
        match slice.as_any_mut().downcast_mut::<P::State>() {
            Some(state) => Plugin::tool_completed(self, state, done),
            None => Vec::new(),
        }
    }
    fn run(
        &self,
        slice: &mut dyn PluginSlice,
        call: PluginCall<'_>,
    ) -> Result<Vec<Directive>, ActionError> {
        let Some(state) = slice.as_any_mut().downcast_mut::<P::State>() else {
            return Err(ActionError::new(format!(
                "plugin `{}` holds a state of another type",
                P::NAME
            )));
        };
        // No copy per call: a plugin's state may be large (a retrieval index); `Plugin::run`
        // checks before it changes anything.
        Plugin::run(self, state, call)
    }
}

/// The plugins of an agent type, in mount order ([`AgentSpec::plugins`](crate::AgentSpec::plugins)).
///
#[derive(Debug, Default)]
pub struct PluginStack {
    plugins: Vec<Box<dyn DynPlugin>>,
    /// Full action name (`quota.status`) -> (plugin index, action).
    actions: HashMap<String, (usize, String)>,
    duplicate: Option<String>,
}

impl PluginStack {
    /// No plugins.
    pub fn new() -> Self {
        PluginStack::default()
    }

    /// The empty stack, for agents without plugins.
    pub fn none() -> &'static PluginStack {
        static NONE: OnceLock<PluginStack> = OnceLock::new();
        NONE.get_or_init(PluginStack::new)
    }

    /// Mounts `plugin` after those already here. Mounting a state key twice makes the agent's
    /// router invalid ([`RouteError::DuplicatePlugin`]).
    #[must_use]
    pub fn with<P: Plugin>(self, plugin: P) -> Self {
        self.with_boxed(Box::new(plugin))
    }

    /// [`with`](PluginStack::with) for an already boxed plugin.
    #[must_use]
    pub fn with_boxed(mut self, plugin: Box<dyn DynPlugin>) -> Self {
        let key = plugin.state_key();
        if self.plugins.iter().any(|p| p.state_key() == key) {
            self.duplicate.get_or_insert_with(|| key.to_string());
        }
        let index = self.plugins.len();
        for route in plugin.routes() {
            self.actions
                .entry(action_name(key, &route.action))
                .or_insert((index, route.action.to_string()));
        }
        self.plugins.push(plugin);
        self
    }

    /// Whether no plugin is mounted.
    pub fn is_empty(&self) -> bool {
        self.plugins.is_empty()
    }

    /// The plugins, in mount order.
    pub fn plugins(&self) -> impl Iterator<Item = &dyn DynPlugin> {
        self.plugins.iter().map(|p| &**p)
    }

    /// The state keys, in mount order.
    pub fn keys(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.plugins.iter().map(|p| p.state_key())
    }

    /// Every plugin's route as a route declaration (targets are the actions' full names,
    /// `quota.status`), checked against the agent's own routes: a plugin mounted twice, or a
    /// plugin route with exactly the pattern of an agent route, is an error.
    pub fn route_specs(&self, agent_routes: &[RouteSpec]) -> Result<Vec<RouteSpec>, RouteError> {
        if let Some(key) = &self.duplicate {
            return Err(RouteError::DuplicatePlugin { key: key.clone() });
        }
        let mut specs = Vec::new();
        for plugin in &self.plugins {
            for route in plugin.routes() {
                if agent_routes.iter().any(|r| r.pattern == route.pattern) {
                    return Err(RouteError::PluginRouteCollision {
                        plugin: plugin.state_key().to_string(),
                        pattern: route.pattern.to_string(),
                    });
                }
                specs.push(RouteSpec {
                    pattern: route.pattern,
                    target: RouteTarget::Action(
                        action_name(plugin.state_key(), &route.action).into(),
                    ),
                    priority: route.priority,
                });
            }
        }
        Ok(specs)
    }

    /// Every plugin's freshly mounted state.
    pub fn mount(&self) -> PluginStates {
        PluginStates {
            slices: self
                .plugins
                .iter()
                .map(|p| (p.state_key(), p.mount()))
                .collect(),
        }
    }

    /// The states a checkpoint saved, typed; a plugin the checkpoint does not know (mounted
    /// since) starts from `mount`, a saved state of a plugin no longer mounted is dropped.
    pub(crate) fn restore(&self, mut saved: SavedStates) -> Result<PluginStates, String> {
        let mut slices = Vec::with_capacity(self.plugins.len());
        for plugin in &self.plugins {
            let key = plugin.state_key();
            let slice = match saved.remove(key) {
                Some(value) => plugin.restore(value).map_err(|e| {
                    format!("the state of plugin `{key}` in this checkpoint does not fit: {e}")
                })?,
                None => plugin.mount(),
            };
            slices.push((key, slice));
        }
        Ok(PluginStates { slices })
    }

    /// The plugin and its action behind a full action name, if a plugin owns it.
    pub fn action(&self, name: &str) -> Option<(usize, &str)> {
        self.actions.get(name).map(|(i, a)| (*i, a.as_str()))
    }

    /// Whether a plugin's pre-routing hook may change a host-built model reply
    /// ([`Plugin::changes_model_replies`]).
    pub(crate) fn changes_model_replies(&self) -> bool {
        self.plugins.iter().any(|p| p.changes_model_replies())
    }

    /// Whether a plugin's outbound hook needs the AI strategies' informational events
    /// ([`Plugin::hears_ai_events`]).
    pub(crate) fn hears_ai_events(&self) -> bool {
        self.plugins.iter().any(|p| p.hears_ai_events())
    }

    /// Runs the pre-routing hooks in mount order until one refuses (`Err((key, reason))`) or
    /// holds the signal (`Ok(Some(directives))`); `Ok(None)`: route it.
    pub(crate) fn before_route(
        &self,
        states: &mut PluginStates,
        signal: &mut Cow<'_, Signal>,
    ) -> Result<Option<Vec<Directive>>, (String, String)> {
        for (plugin, (_, slice)) in self.plugins.iter().zip(states.slices.iter_mut()) {
            let flow = catch_unwind(AssertUnwindSafe(|| {
                plugin.before_route(&mut **slice, signal)
            }))
            .unwrap_or_else(|payload| Flow::Refuse {
                reason: ActionError::panicked("before_route", payload.as_ref())
                    .message()
                    .to_string(),
            });
            match flow {
                Flow::Continue => {}
                Flow::Refuse { reason } => return Err((plugin.state_key().to_string(), reason)),
                Flow::Defer { directives } => return Ok(Some(directives)),
            }
        }
        Ok(None)
    }

    /// Runs the outbound hooks, in mount order, on every `Emit` directive.
    pub(crate) fn after_emit(&self, states: &mut PluginStates, directives: &mut [Directive]) {
        for directive in directives {
            if let Directive::Emit(signal) = directive {
                for (plugin, (_, slice)) in self.plugins.iter().zip(states.slices.iter_mut()) {
                    let hook = AssertUnwindSafe(|| plugin.after_emit(&mut **slice, signal));
                    if catch_unwind(hook).is_err() {
                        tracing::error!(
                            plugin = plugin.state_key(),
                            "a plugin's outbound hook panicked; the signal goes out as it was left"
                        );
                    }
                }
            }
        }
    }

    /// The plugin that awaits the async tool `id` (its completion is the plugin's).
    pub(crate) fn tool_owner(&self, states: &PluginStates, id: &str) -> Option<usize> {
        self.plugins
            .iter()
            .zip(&states.slices)
            .position(|(plugin, (_, slice))| plugin.awaits_tool(&**slice, id))
    }

    /// Gives plugin `index` the result of the async tool it awaited.
    pub(crate) fn tool_completed(
        &self,
        index: usize,
        states: &mut PluginStates,
        done: ToolDone<'_>,
    ) -> Vec<Directive> {
        let (Some(plugin), Some((_, slice))) =
            (self.plugins.get(index), states.slices.get_mut(index))
        else {
            return Vec::new();
        };
        catch_unwind(AssertUnwindSafe(|| {
            plugin.tool_completed(&mut **slice, done)
        }))
        .unwrap_or_else(|payload| {
            vec![Directive::error(
                crate::error::AgentError::Action {
                    action: done.name.to_string().into(),
                    error: ActionError::panicked("tool_completed", payload.as_ref()),
                },
                crate::error::ErrorContext::Strategy,
            )]
        })
    }

    /// Runs plugin `index`'s action on its slice.
    pub(crate) fn run(
        &self,
        index: usize,
        states: &mut PluginStates,
        call: PluginCall<'_>,
    ) -> Result<Vec<Directive>, ActionError> {
        match (self.plugins.get(index), states.slices.get_mut(index)) {
            (Some(plugin), Some((_, slice))) => {
                catch_unwind(AssertUnwindSafe(|| plugin.run(&mut **slice, call))).unwrap_or_else(
                    |payload| Err(ActionError::panicked(call.action, payload.as_ref())),
                )
            }
            _ => Err(ActionError::new(format!(
                "no plugin mounted for `{}`",
                call.action
            ))),
        }
    }
}

/// A plugin action's name in routes and instructions: `<state key>.<action>`.
pub(crate) fn action_name(key: &str, action: &str) -> String {
    format!("{key}.{action}")
}
