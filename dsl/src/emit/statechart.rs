//! What a statechart (a machine with `state X { ... }` blocks) adds to the generated FSM code.
//!
//! The configuration of a machine without parallel regions is one active leaf state plus its
//! ancestors, so the generated `<Agent>State` stays a flat enum (compound states are variants
//! too, never the position) and the hierarchy is a parent table. The `match` on
//! `(leaf, event)` is built at compile time with each leaf's rows followed by its ancestors'
//! (innermost first, SCXML's selection), so firing an event costs what it costs in a flat
//! machine; the runtime walks the parent table only to run `exit`/`enter` actions through the
//! transition's domain. A flat machine never reaches this file.

use std::collections::{HashMap, HashSet};

use proc_macro2::TokenStream;
use quote::quote;

use super::ident;
use crate::model::{Chart, FsmDef, HookKind, Name, RowDef};

/// The resolved hierarchy of an accepted statechart, as the generator needs it.
pub struct Nesting<'a> {
    chart: Chart<'a>,
    /// For each leaf: its rows, then its ancestors' rows, innermost first.
    chains: HashMap<&'a str, Vec<&'a RowDef>>,
}

impl<'a> Nesting<'a> {
    /// `None` for a flat machine.
    pub fn new(fsm: &'a FsmDef) -> Option<Self> {
        if !fsm.is_nested() {
            return None;
        }
        let chart = Chart::new(fsm);
        let by_state = fsm.rows_by_state();
        let mut chains = HashMap::new();
        for (id, state) in chart.states.iter().enumerate() {
            if chart.compound[id] {
                continue;
            }
            let chain: Vec<&RowDef> = std::iter::once(id)
                .chain(chart.ancestors(id))
                .flat_map(|s| {
                    by_state
                        .get(chart.states[s].value.as_str())
                        .into_iter()
                        .flatten()
                        .copied()
                })
                .collect();
            chains.insert(state.value.as_str(), chain);
        }
        Some(Nesting { chart, chains })
    }

    /// The rows an event may fire in `state`: none for a compound state (never the position).
    pub fn event_rows(&self, state: &str) -> &[&'a RowDef] {
        self.chains.get(state).map_or(&[], Vec::as_slice)
    }

    /// The leaf a row enters by default (a history's default before it has a record).
    pub fn target(&self, row: &RowDef) -> &'a Name {
        let leaf = self
            .chart
            .target_leaf(row)
            .expect("an accepted statechart resolves every row target");
        self.chart.states[leaf]
    }

    /// The leaf the machine starts in.
    pub fn initial(&self, fsm: &FsmDef) -> Option<&'a Name> {
        let start = self.chart.id(&fsm.initial_state()?.value)?;
        Some(self.chart.states[self.chart.default_leaf(start)])
    }

    fn variant(&self, id: usize) -> syn::Ident {
        let s = self.chart.states[id];
        ident(&s.value, s.span)
    }

    /// Items of `impl FsmSpec`: the parent table, each row's domain and history, and the
    /// compound states that keep a history.
    pub fn spec_items(&self, fsm: &FsmDef, state_ty: &syn::Ident, rt: &TokenStream) -> TokenStream {
        let chart = &self.chart;
        let leaf_arms = (0..chart.states.len())
            .filter(|&id| chart.compound[id])
            .map(|id| {
                let s = self.variant(id);
                let leaf = self.variant(chart.default_leaf(id));
                quote!(#state_ty::#s => #state_ty::#leaf)
            });
        let mut domain_arms = Vec::new();
        let mut history_arms = Vec::new();
        for (i, row) in fsm.rows.iter().enumerate() {
            if row.internal {
                continue;
            }
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            if let Some(domain) = chart.domain(row) {
                let d = self.variant(domain);
                domain_arms.push(quote!(#i => ::core::option::Option::Some(#state_ty::#d)));
            }
            if let Some(h) = chart.histories.get(row.to.value.as_str()) {
                let compound = h.block.as_deref().and_then(|b| chart.id(b));
                if let Some(compound) = compound {
                    let c = self.variant(compound);
                    let deep = h.deep;
                    history_arms
                        .push(quote!(#i => ::core::option::Option::Some((#state_ty::#c, #deep))));
                }
            }
        }
        let keeping: Vec<syn::Ident> = {
            let mut ids: Vec<usize> = fsm
                .histories
                .iter()
                .filter_map(|h| chart.id(h.block.as_deref()?))
                .collect();
            ids.sort_unstable();
            ids.dedup();
            ids.into_iter().map(|id| self.variant(id)).collect()
        };
        let keeps = if keeping.is_empty() {
            quote!(false)
        } else {
            quote!(::core::matches!(state, #(#state_ty::#keeping)|*))
        };
        // With regions the configuration is a set of leaves and routes do not apply.
        let regions = if fsm.has_regions() {
            self.region_items(fsm, state_ty)
        } else {
            self.route_items(fsm, state_ty, rt)
        };
        quote! {
            const NESTED: bool = true;

            #regions

            #[inline]
            fn parent(state: #state_ty) -> ::core::option::Option<#state_ty> {
                #state_ty::parent(state)
            }

            #[allow(unreachable_patterns)]
            fn default_leaf(state: #state_ty) -> #state_ty {
                match state {
                    #(#leaf_arms,)*
                    other => other,
                }
            }

            #[allow(unreachable_patterns)]
            fn domain(row: u32) -> ::core::option::Option<#state_ty> {
                match row {
                    #(#domain_arms,)*
                    _ => ::core::option::Option::None,
                }
            }

            #[allow(unreachable_patterns)]
            fn history(row: u32) -> ::core::option::Option<(#state_ty, bool)> {
                match row {
                    #(#history_arms,)*
                    _ => ::core::option::Option::None,
                }
            }

            #[allow(unused_variables)]
            fn keeps_history(state: #state_ty) -> bool {
                #keeps
            }
        }
    }

    /// `FsmSpec::route`: for each leaf and each row it may take (its own and its ancestors'),
    /// the states left and entered, so taking a row walks no parent table. Rows to a history
    /// have none (their entries depend on the record). As many arms as the transition
    /// function has rows per leaf.
    fn route_items(&self, fsm: &FsmDef, state_ty: &syn::Ident, rt: &TokenStream) -> TokenStream {
        let chart = &self.chart;
        let index: HashMap<*const RowDef, u32> = fsm
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| (std::ptr::from_ref(r), u32::try_from(i).unwrap_or(u32::MAX)))
            .collect();
        // Sets, so each state's test is a lookup (a search per state would be quadratic).
        let hooked = |kind: HookKind| -> HashSet<&str> {
            fsm.hooks
                .iter()
                .filter(|h| h.kind.value == kind)
                .map(|h| h.state.value.as_str())
                .collect()
        };
        let (exit_hooks, enter_hooks) = (hooked(HookKind::Exit), hooked(HookKind::Enter));
        let timed: HashSet<&str> = fsm
            .rows
            .iter()
            .filter(|r| r.after().is_some())
            .map(|r| r.from.value.as_str())
            .collect();
        let keeping: HashSet<&str> = fsm
            .histories
            .iter()
            .filter_map(|h| h.block.as_deref())
            .collect();
        let mut arms = Vec::new();
        // The `(leaf, row)` pairs that are not a bare move, for `FsmSpec::plain`.
        let mut busy = Vec::new();
        let mut to_history: Vec<u32> = Vec::new();
        for (leaf, state) in chart.states.iter().enumerate() {
            if chart.compound[leaf] {
                continue;
            }
            let l = self.variant(leaf);
            for row in self.event_rows(&state.value) {
                if row.internal {
                    continue;
                }
                if chart.histories.contains_key(row.to.value.as_str()) {
                    if let Some(&i) = index.get(&std::ptr::from_ref(*row)) {
                        to_history.push(i);
                    }
                    continue;
                }
                let (Some(to), Some(&i)) =
                    (chart.target_leaf(row), index.get(&std::ptr::from_ref(*row)))
                else {
                    continue;
                };
                let domain = chart.domain(row);
                let up = |from: usize| -> Vec<usize> {
                    std::iter::once(from)
                        .chain(chart.ancestors(from))
                        .take_while(|&s| Some(s) != domain)
                        .collect()
                };
                let exits = up(leaf);
                let mut entries = up(to);
                entries.reverse();
                let name = |s: usize| chart.states[s].value.as_str();
                let plain = !exits
                    .iter()
                    .any(|&s| exit_hooks.contains(name(s)) || keeping.contains(name(s)))
                    && !entries
                        .iter()
                        .any(|&s| enter_hooks.contains(name(s)) || timed.contains(name(s)));
                if !plain {
                    busy.push(quote!((#state_ty::#l, #i)));
                }
                let exits = exits.into_iter().map(|s| self.variant(s));
                let entries = entries.into_iter().map(|s| self.variant(s));
                arms.push(quote! {
                    (#state_ty::#l, #i) => ::core::option::Option::Some(&#rt::Route {
                        exits: &[#(#state_ty::#exits),*],
                        entries: &[#(#state_ty::#entries),*],
                        plain: #plain,
                    })
                });
            }
        }
        to_history.sort_unstable();
        to_history.dedup();
        // Most machines have few hooks, timers and histories: the pairs that are not a bare
        // move are listed (none: the constant `true`), so the test folds to a few compares.
        let plain = match (busy.is_empty(), to_history.is_empty()) {
            (true, true) => quote!(true),
            (false, true) => quote!(!::core::matches!((from, row), #(#busy)|*)),
            (true, false) => quote!(!::core::matches!(row, #(#to_history)|*)),
            (false, false) => quote!(
                !::core::matches!(row, #(#to_history)|*)
                    && !::core::matches!((from, row), #(#busy)|*)
            ),
        };
        // Entering the initial leaf and its ancestors runs and arms nothing: then a command
        // need not test whether they were entered (as a flat machine's initial state).
        let quiet_start = fsm
            .initial_state()
            .and_then(|s| chart.id(&s.value))
            .map(|start| chart.default_leaf(start))
            .is_some_and(|leaf| {
                !std::iter::once(leaf)
                    .chain(chart.ancestors(leaf))
                    .map(|s| chart.states[s].value.as_str())
                    .any(|s| enter_hooks.contains(s) || timed.contains(s))
            });
        quote! {
            const QUIET_START: bool = #quiet_start;

            #[inline]
            #[allow(unreachable_patterns)]
            fn route(from: #state_ty, row: u32) -> ::core::option::Option<&'static #rt::Route<#state_ty>> {
                match (from, row) {
                    #(#arms,)*
                    _ => ::core::option::Option::None,
                }
            }

            #[inline(always)]
            #[allow(unused_variables)]
            fn plain(from: #state_ty, row: u32) -> bool {
                #plain
            }
        }
    }

    /// Items of `impl FsmSpec` for a machine with parallel states or completion: which states
    /// are parallel or final, each compound's children, document order and each row's source.
    fn region_items(&self, fsm: &FsmDef, state_ty: &syn::Ident) -> TokenStream {
        let chart = &self.chart;
        let all = 0..chart.states.len();
        let parallel: Vec<syn::Ident> = all
            .clone()
            .filter(|&id| chart.parallel[id])
            .map(|id| self.variant(id))
            .collect();
        let finals: Vec<syn::Ident> = all
            .clone()
            .filter(|&id| chart.finals[id])
            .map(|id| self.variant(id))
            .collect();
        let set = |states: &[syn::Ident]| {
            if states.is_empty() {
                quote!(false)
            } else {
                quote!(::core::matches!(state, #(#state_ty::#states)|*))
            }
        };
        let (is_parallel, is_final) = (set(&parallel), set(&finals));
        let children_arms = all
            .clone()
            .filter(|&id| !chart.children[id].is_empty())
            .map(|id| {
                let s = self.variant(id);
                let children = chart.children[id].iter().map(|&c| self.variant(c));
                quote!(#state_ty::#s => &[#(#state_ty::#children),*])
            });
        let order = chart.document_order();
        let position_arms = all.map(|id| {
            let s = self.variant(id);
            let at = u32::try_from(order[id]).unwrap_or(u32::MAX);
            quote!(#state_ty::#s => #at)
        });
        let source_arms = fsm.rows.iter().enumerate().filter_map(|(i, row)| {
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            let s = self.variant(chart.id(&row.from.value)?);
            Some(quote!(#i => ::core::option::Option::Some(#state_ty::#s)))
        });
        quote! {
            const PARALLEL: bool = true;

            #[allow(unused_variables)]
            fn parallel(state: #state_ty) -> bool {
                #is_parallel
            }

            #[allow(unreachable_patterns)]
            fn children(state: #state_ty) -> &'static [#state_ty] {
                match state {
                    #(#children_arms,)*
                    _ => &[],
                }
            }

            #[allow(unused_variables)]
            fn is_final(state: #state_ty) -> bool {
                #is_final
            }

            fn position(state: #state_ty) -> u32 {
                match state {
                    #(#position_arms,)*
                }
            }

            #[allow(unreachable_patterns)]
            fn row_source(row: u32) -> ::core::option::Option<#state_ty> {
                match row {
                    #(#source_arms,)*
                    _ => ::core::option::Option::None,
                }
            }
        }
    }

    /// Inherent items of `<Agent>State`: `parent` and `in_state`.
    pub fn state_items(&self, state_ty: &syn::Ident) -> TokenStream {
        let chart = &self.chart;
        let parent_arms = (0..chart.states.len()).filter_map(|id| {
            let parent = self.variant(chart.parent[id]?);
            let s = self.variant(id);
            Some(quote!(#state_ty::#s => ::core::option::Option::Some(#state_ty::#parent)))
        });
        quote! {
            impl #state_ty {
                /// The compound state this state is declared in (`None` at the top level).
                #[allow(unreachable_patterns)]
                pub const fn parent(self) -> ::core::option::Option<Self> {
                    match self {
                        #(#parent_arms,)*
                        _ => ::core::option::Option::None,
                    }
                }

                /// Whether this state is `state` or inside it: `agent.fsm_state().in_state(On)`
                /// holds in every descendant of `On`.
                pub const fn in_state(self, state: Self) -> bool {
                    let mut at = ::core::option::Option::Some(self);
                    while let ::core::option::Option::Some(s) = at {
                        if s as usize == state as usize {
                            return true;
                        }
                        at = s.parent();
                    }
                    false
                }
            }
        }
    }
}
