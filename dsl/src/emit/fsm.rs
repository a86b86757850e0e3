//! Generated code of an FSM agent: `<Agent>State` and `<Agent>Event` enums, the typed event API,
//! and `impl FsmSpec` whose transition function is one `match` on `(state, event)`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};

use super::rust_names::rust_path;
use super::{event_ident, ident, local};
use crate::check::fsm::RESERVED;
use crate::graph;
use crate::model::ident::{Case, rust_ident};
use crate::model::{AgentDef, FsmDef, HookKind, RowDef, TerminalKind};

/// The name of the generated state enum.
pub fn state_enum(agent: &str) -> String {
    format!("{agent}State")
}

/// The name of the generated event enum.
pub fn event_enum(agent: &str) -> String {
    format!("{agent}Event")
}

/// Everything an FSM agent gets besides `impl AgentSpec`.
pub fn fsm(def: &AgentDef, fsm: &FsmDef, krate: &TokenStream) -> TokenStream {
    let agent = ident(&def.name.value, def.name.span);
    let name = &def.name.value;
    let state_ty = format_ident!("{}", state_enum(name));
    let event_ty = format_ident!("{}", event_enum(name));
    let private = quote!(#krate::__private);
    let rt = quote!(#krate::strategy::fsm);

    let states = fsm.states();
    let state_names: Vec<&str> = states.iter().map(|s| s.value.as_str()).collect();
    let state_variants: Vec<syn::Ident> = states.iter().map(|s| ident(&s.value, s.span)).collect();
    let events = fsm.events();
    let event_names: Vec<&str> = events.iter().map(|e| e.value.as_str()).collect();
    let event_variants: Vec<syn::Ident> = events
        .iter()
        .map(|e| event_ident(&e.value, e.span))
        .collect();

    let state_docs = state_names.iter().map(|n| format!("`{n}`"));
    let event_docs = event_names.iter().map(|n| format!("`{n}`"));
    // A statechart: its hierarchy (`None` for a flat machine, whose code does not change).
    let nesting = super::statechart::Nesting::new(fsm);
    let initial = nesting
        .as_ref()
        .map_or_else(|| fsm.initial_state(), |n| n.initial(fsm))
        .map(|s| ident(&s.value, s.span))
        .unwrap_or_else(|| state_variants[0].clone());
    let transitions = fsm.rows.iter().filter(|r| !r.internal).map(|row| {
        let (from, to, label) = (&row.from.value, &row.to.value, graph::fsm::label(row));
        quote!(__T { from: #from, to: #to, label: #label })
    });
    let dot = graph::fsm::dot(name, fsm);
    let mermaid = graph::fsm::mermaid(fsm);
    // The diagram in the docs is for reading: past a few hundred rows it says where the whole
    // machine is rather than copy a megabyte into every doc page.
    let state_doc = if fsm.rows.len() <= DOC_DIAGRAM_ROWS {
        format!("The states of [`{name}`]'s machine, named as declared.\n\n```text\n{mermaid}```")
    } else {
        format!(
            "The states of [`{name}`]'s machine, named as declared.\n\nThe machine has {} rows: \
             its diagram is [`{state_ty}::MERMAID`] (Mermaid) and [`{state_ty}::DOT`] (Graphviz).",
            fsm.rows.len()
        )
    };
    let event_doc = format!(
        "The events of [`{name}`]'s machine: `agent.cmd({event_ty}::X)` fires one, \
         `{event_ty}::X.with(params)` with parameters for the row's action."
    );

    let enum_items = names_enum(
        &state_ty,
        &state_variants,
        &state_names,
        "state",
        name,
        &private,
        &rt,
    );
    let event_items = names_enum(
        &event_ty,
        &event_variants,
        &event_names,
        "event",
        name,
        &private,
        &rt,
    );

    // One pass over the rows, grouped by state and then by event in the events' order: linear
    // in the size of the machine (`benches/compile.rs` runs 10,000 states).
    let by_state = fsm.rows_by_state();
    let event_index: std::collections::HashMap<&str, usize> = events
        .iter()
        .enumerate()
        .map(|(i, e)| (e.value.as_str(), i))
        .collect();
    let no_rows = Vec::new();
    let rows_of = |state: &str| by_state.get(state).unwrap_or(&no_rows);
    // The rows an event may fire in a state: in a statechart, the leaf's then its ancestors'.
    let event_rows_of = |state: &str| match &nesting {
        Some(n) => n.event_rows(state),
        None => rows_of(state).as_slice(),
    };
    // A row's target state: in a statechart, the leaf it enters by default.
    let target = |row: &RowDef| match &nesting {
        Some(n) => {
            let leaf = n.target(row);
            ident(&leaf.value, row.to.span)
        }
        None => ident(&row.to.value, row.to.span),
    };
    // For each state: its event rows grouped by event, in the events' order.
    let event_groups = |state: &str| -> Vec<(usize, Vec<&RowDef>)> {
        let mut groups: Vec<(usize, Vec<&RowDef>)> = Vec::new();
        // Where each event's group is, so many events leaving one state stay linear.
        let mut slot: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
        for row in event_rows_of(state) {
            let Some(event) = row.event() else { continue };
            let index = event_index[event.value.as_str()];
            match slot.get(&index) {
                Some(&at) => groups[at].1.push(row),
                None => {
                    slot.insert(index, groups.len());
                    groups.push((index, vec![row]));
                }
            }
        }
        groups.sort_by_key(|(i, _)| *i);
        groups
    };

    // States accepting the same events share one arm (most states of a large machine do).
    let accepted = group_by_key(states.iter().map(|state| {
        let events: Vec<usize> = event_groups(&state.value)
            .into_iter()
            .map(|(i, _)| i)
            .collect();
        (events, ident(&state.value, state.span))
    }))
    .into_iter()
    .map(|(accepted, variants)| {
        let accepted = accepted.iter().map(|&i| events[i].value.as_str());
        quote!(#(__S::#variants)|* => &[#(__N(#accepted)),*])
    });

    // Rows are numbered in declaration order; `Step::Fire(n)` names row `n`.
    let indexed: Vec<(u32, &RowDef)> = fsm
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| (u32::try_from(i).unwrap_or(u32::MAX), r))
        .collect();
    let row_index: std::collections::HashMap<*const RowDef, u32> = indexed
        .iter()
        .map(|(i, r)| (std::ptr::from_ref(*r), *i))
        .collect();
    let transition_arms = states.iter().flat_map(|state| {
        event_groups(&state.value).into_iter().map(|(i, rows)| {
            let event = events[i];
            let s = ident(&state.value, state.span);
            let e = event_ident(&event.value, event.span);
            let body = guarded(&numbered(&row_index, &rows), &target);
            // Each arm hands its step to the continuation (`__t!`, see `transition_in`).
            quote!((__S::#s, __E::#e) => __t!(#body))
        })
    });
    // A small machine's `match` is inlined into the command that fires it, with each row's
    // work in its arm: the command then costs what a hand-written `match` doing the same
    // work does. A large one stays one function (its code would be copied into each caller).
    let transition_inline = if fsm.rows.len() <= INLINE_ROWS {
        quote!(#[inline(always)])
    } else {
        quote!(#[inline])
    };
    // A small machine first tests whether its state has a row for the event at all, one bit
    // of a constant mask per state: a refusal (most events of a device's stream) is then one
    // conditional branch, which the processor predicts from the stream's history, instead of
    // the `match`'s indirect jump on the state, which it predicts badly
    // (`fsm/statechart_mixed` in BENCHMARKS.md).
    let refuse_early = (fsm.rows.len() <= INLINE_ROWS && events.len() <= 64).then(|| {
        let masks = states.iter().map(|state| {
            event_groups(&state.value)
                .iter()
                .fold(0u64, |mask, (i, _)| mask | (1u64 << i))
        });
        let (n, from, event) = (states.len(), local("from"), local("event"));
        quote! {
            const __ACCEPTS: [u64; #n] = [#(#masks),*];
            if __ACCEPTS[#from as usize] >> (#event as u32) & 1 == 0 {
                return __t!(#rt::Step::Invalid);
            }
        }
    });
    let timeout_arms = states.iter().filter_map(|state| {
        let rows: Vec<&RowDef> = rows_of(&state.value)
            .iter()
            .copied()
            .filter(|r| r.after().is_some())
            .collect();
        if rows.is_empty() {
            return None;
        }
        let s = ident(&state.value, state.span);
        let body = guarded(&numbered(&row_index, &rows), &target);
        Some(quote!(__S::#s => #body))
    });
    // `when done` rows, by the compound state whose completion fires them.
    let done_arms: Vec<TokenStream> = states
        .iter()
        .filter_map(|state| {
            let rows: Vec<&RowDef> = rows_of(&state.value)
                .iter()
                .copied()
                .filter(|r| r.is_done())
                .collect();
            if rows.is_empty() {
                return None;
            }
            let s = ident(&state.value, state.span);
            let body = guarded(&numbered(&row_index, &rows), &target);
            Some(quote!(__S::#s => #body))
        })
        .collect();
    // Rows sharing a guard or an action share one arm (`1u32 | 3u32 => ...`): a machine of
    // 10,000 rows with one action is one arm, not 10,000 copies of the same call.
    let guard_error_arms = grouped_rows(&indexed, |row| row.guard.as_ref()).map(|(rows, guard)| {
        let name = path_text(&guard.value);
        let span = guard.span.to_proc_macro();
        let path = rust_path(&guard.value);
        let (agent, params) = (local("agent"), local("params"));
        let check = quote_spanned!(span=> __G::<Self, _>::check(&#path, #name, #agent, #params));
        // Called like `Step::guarded` calls it, so a guard of the wrong type is the same
        // diagnostic in both places, which rustc reports once.
        quote!(#(#rows)|* => #rt::GuardError::of(#check, #name))
    });
    let action_arms: Vec<TokenStream> = grouped_rows(&indexed, |row| row.action.as_ref())
        .map(|(rows, action)| {
            let path = rust_path(&action.value);
            quote!(#(#rows)|* => ::core::option::Option::Some(#rt::FsmAction::<Self>::of::<#path>()))
        })
        .collect();
    // The same table, calling each action through a constant function pointer, which the
    // optimizer turns into a direct call and inlines (a bound error here is the same
    // diagnostic at the same span as `row_action`'s, which rustc reports once).
    let run_arms = grouped_rows(&indexed, |row| row.action.as_ref()).map(|(rows, action)| {
        let path = rust_path(&action.value);
        let (agent, params) = (local("agent"), local("params"));
        quote!(#(#rows)|* => ::core::option::Option::Some((#rt::FsmAction::<Self>::of::<#path>().run)(#agent, #params)))
    });
    let guard_names = |rows: Vec<&RowDef>| -> Vec<String> {
        rows.iter()
            .filter_map(|r| r.guard.as_ref())
            .map(|g| path_text(&g.value))
            .collect()
    };
    // Each `(state, trigger)` with guarded rows, by the guards' names: the pairs naming the same
    // guards share one arm.
    let guards_arms = group_by_key(states.iter().flat_map(|state| {
        let s = ident(&state.value, state.span);
        let mut pairs: Vec<(Vec<String>, TokenStream)> = event_groups(&state.value)
            .into_iter()
            .filter(|(_, rows)| rows.iter().any(|r| r.guard.is_some()))
            .map(|(i, rows)| {
                let event = events[i];
                let e = event_ident(&event.value, event.span);
                (guard_names(rows), quote!((__S::#s, __Some(__E::#e))))
            })
            .collect();
        let timers: Vec<&RowDef> = rows_of(&state.value)
            .iter()
            .copied()
            .filter(|r| r.after().is_some())
            .collect();
        if timers.iter().any(|r| r.guard.is_some()) {
            pairs.push((
                guard_names(timers),
                quote!((__S::#s, ::core::option::Option::None)),
            ));
        }
        pairs
    }))
    .into_iter()
    .map(|(names, pairs)| quote!(#(#pairs)|* => &[#(__N(#names)),*]));
    let after_arms = states.iter().filter_map(|state| {
        let row = rows_of(&state.value).iter().find(|r| r.after().is_some())?;
        let ms = row.after()?.value.0;
        let s = ident(&state.value, state.span);
        Some(quote!(#state_ty::#s => ::core::option::Option::Some(::core::time::Duration::from_millis(#ms))))
    });
    // Each state's first hook of each kind, indexed once (a search per state would be
    // quadratic in the hooks).
    let mut hooks: std::collections::HashMap<(HookKind, &str), &crate::model::HookDef> =
        std::collections::HashMap::new();
    for hook in &fsm.hooks {
        hooks
            .entry((hook.kind.value, hook.state.value.as_str()))
            .or_insert(hook);
    }
    let hook_arms = |kind: HookKind| {
        let state_ty = &state_ty;
        let rt = &rt;
        let hooks = &hooks;
        states
            .iter()
            .filter_map(move |state| {
                let hook = hooks.get(&(kind, state.value.as_str()))?;
                let s = ident(&state.value, state.span);
                let action = rust_path(&hook.action.value);
                Some(quote!(#state_ty::#s => ::core::option::Option::Some(#rt::FsmAction::<Self>::of::<#action>())))
            })
            .collect::<Vec<_>>()
    };
    let interrupt_items = interrupts(fsm, &indexed, krate);
    let nested_spec = nesting
        .as_ref()
        .map(|n| n.spec_items(fsm, &state_ty, &rt))
        .unwrap_or_default();
    let nested_state = nesting
        .as_ref()
        .map(|n| n.state_items(&state_ty))
        .unwrap_or_default();
    let enter_arms = hook_arms(HookKind::Enter);
    let exit_arms = hook_arms(HookKind::Exit);
    let end_arms = fsm.terminals.iter().map(|t| {
        let s = ident(&t.state.value, t.state.span);
        let end = match t.kind {
            TerminalKind::Success => quote!(#rt::End::Success),
            TerminalKind::Failure => quote!(#rt::End::Failure),
        };
        quote!(#state_ty::#s => ::core::option::Option::Some(#end))
    });

    // The guards' locals, mixed-site like the guard calls' `agent` and `params`.
    let (l_agent, l_from, l_event, l_params, l_row) = (
        local("agent"),
        local("from"),
        local("event"),
        local("params"),
        local("row"),
    );
    let (l_holder, l_then) = (local("holder"), local("then"));
    // `timeout` and `done`: the row a state takes by itself (its guards see `null` parameters).
    let by_state = |name: &str, arms: &[TokenStream]| {
        let name = format_ident!("{name}");
        quote! {
            #[allow(unreachable_patterns, unused_variables, unused_imports)]
            fn #name(#l_agent: &Self, #l_from: #state_ty) -> #rt::Step<#state_ty> {
                use #state_ty as __S;
                use #rt::Step as __Step;
                use #rt::Guard as __G;
                use ::core::result::Result as __R;
                let #l_params = &#private::serde_json::Value::Null;
                match #l_from {
                    #(#arms,)*
                    _ => #rt::Step::Invalid,
                }
            }
        }
    };
    let timeout_arms: Vec<TokenStream> = timeout_arms.collect();
    let timeout_fn = by_state("timeout", &timeout_arms);
    let done_fn = if done_arms.is_empty() {
        TokenStream::new()
    } else {
        by_state("done", &done_arms)
    };
    quote! {
        #[doc = #state_doc]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum #state_ty {
            #(#[doc = #state_docs] #state_variants,)*
        }

        #enum_items

        #nested_state

        impl #state_ty {
            /// The machine as a Graphviz `digraph`.
            pub const DOT: &'static str = #dot;
            /// The machine as a Mermaid `stateDiagram-v2`.
            pub const MERMAID: &'static str = #mermaid;
        }

        impl ::core::default::Default for #state_ty {
            /// The initial state.
            fn default() -> Self {
                #state_ty::#initial
            }
        }

        #[doc = #event_doc]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum #event_ty {
            #(#[doc = #event_docs] #event_variants,)*
        }

        #event_items

        impl #event_ty {
            /// This event with parameters for the row's action (what a signal's data carries).
            pub fn with(self, params: #private::serde_json::Value) -> #rt::WithParams<Self> {
                #rt::WithParams { event: self, params }
            }
        }

        impl #krate::Command<#agent> for #event_ty {
            type Output = ::core::result::Result<#krate::Directives, #rt::FsmError<#agent>>;
            #[inline]
            fn run(self, agent: &mut #krate::Agent<#agent>) -> Self::Output {
                #krate::Fsm::fire_bare(agent, self)
            }
        }

        impl #krate::FsmSpec for #agent {
            type State = #state_ty;
            type Event = #event_ty;
            const STATES: &'static [#state_ty] = #state_ty::ALL;
            const EVENTS: &'static [#event_ty] = #event_ty::ALL;

            fn event(name: &str) -> ::core::option::Option<#event_ty> {
                #event_ty::from_name(name)
            }

            const EVENT_NAMES: &'static [#rt::Name] = &[#(#rt::Name::Borrowed(#event_names)),*];

            const TRANSITIONS: &'static [#krate::inspect::Transition] = {
                use #krate::inspect::Transition as __T;
                &[#(#transitions),*]
            };

            #[allow(unused_imports)]
            fn accepted(state: #state_ty) -> &'static [#rt::Name] {
                use #state_ty as __S;
                use ::std::borrow::Cow::Borrowed as __N;
                match state {
                    #(#accepted,)*
                }
            }

            // Every arm calls the continuation with its step (computed first: the guards
            // borrow the state from the holder the continuation then takes), so what follows
            // a row compiles into its arm.
            #transition_inline
            #[allow(unreachable_patterns, unused_variables, unused_imports)]
            fn transition_in<__H: #rt::Holds<Self>, __F: #rt::StepThen<__H, #state_ty>>(
                #l_holder: &mut __H,
                #l_from: #state_ty,
                #l_event: #event_ty,
                #l_params: &#private::serde_json::Value,
                #l_then: __F,
            ) -> __F::Out {
                use #state_ty as __S;
                use #event_ty as __E;
                use #rt::Step as __Step;
                use #rt::Guard as __G;
                use ::core::result::Result as __R;
                let #l_agent: &Self = #rt::Holds::held(#l_holder);
                macro_rules! __t {
                    ($step:expr) => {{
                        let __step = $step;
                        #rt::StepThen::then(#l_then, #l_holder, __step)
                    }};
                }
                #refuse_early
                match (#l_from, #l_event) {
                    #(#transition_arms,)*
                    _ => __t!(#rt::Step::Invalid),
                }
            }

            #timeout_fn

            #done_fn

            #[inline]
            #[allow(unreachable_patterns)]
            fn row_action(row: u32) -> ::core::option::Option<#rt::FsmAction<Self>> {
                match row {
                    #(#action_arms,)*
                    _ => ::core::option::Option::None,
                }
            }

            #[inline]
            #[allow(unreachable_patterns, unused_variables)]
            fn run_row(
                #l_row: u32,
                #l_agent: &mut Self,
                #l_params: &#private::serde_json::Value,
            ) -> ::core::option::Option<::core::result::Result<#krate::Outcome, #krate::ActionError>> {
                match #l_row {
                    #(#run_arms,)*
                    _ => ::core::option::Option::None,
                }
            }

            #[allow(unreachable_patterns, unused_variables, unused_imports)]
            fn guard_error(
                #l_agent: &Self,
                #l_row: u32,
                #l_params: &#private::serde_json::Value,
            ) -> ::core::option::Option<#rt::GuardError> {
                use #rt::Guard as __G;
                match #l_row {
                    #(#guard_error_arms,)*
                    _ => ::core::option::Option::None,
                }
            }

            #[allow(unreachable_patterns, unused_imports)]
            fn guards(
                from: #state_ty,
                event: ::core::option::Option<#event_ty>,
            ) -> &'static [#rt::Name] {
                use #state_ty as __S;
                use #event_ty as __E;
                use ::std::borrow::Cow::Borrowed as __N;
                use ::core::option::Option::Some as __Some;
                match (from, event) {
                    #(#guards_arms,)*
                    _ => &[],
                }
            }

            #[inline]
            #[allow(unreachable_patterns)]
            fn after(state: #state_ty) -> ::core::option::Option<::core::time::Duration> {
                match state {
                    #(#after_arms,)*
                    _ => ::core::option::Option::None,
                }
            }

            #[inline]
            #[allow(unreachable_patterns)]
            fn enter(state: #state_ty) -> ::core::option::Option<#rt::FsmAction<Self>> {
                match state {
                    #(#enter_arms,)*
                    _ => ::core::option::Option::None,
                }
            }

            #[inline]
            #[allow(unreachable_patterns)]
            fn exit(state: #state_ty) -> ::core::option::Option<#rt::FsmAction<Self>> {
                match state {
                    #(#exit_arms,)*
                    _ => ::core::option::Option::None,
                }
            }

            #[inline]
            #[allow(unreachable_patterns)]
            fn end(state: #state_ty) -> ::core::option::Option<#rt::End> {
                match state {
                    #(#end_arms,)*
                    _ => ::core::option::Option::None,
                }
            }

            #nested_spec

            #interrupt_items
        }
    }
}

/// The `FsmSpec` items of a machine's interrupts (none: the trait's defaults).
fn interrupts(fsm: &FsmDef, rows: &[(u32, &RowDef)], krate: &TokenStream) -> TokenStream {
    if fsm.interrupts.is_empty() {
        return TokenStream::new();
    }
    let private = quote!(#krate::__private);
    // The first declaration of each name (a second one is an error already reported).
    let mut index: std::collections::HashMap<&str, u32> = std::collections::HashMap::new();
    for (i, interrupt) in fsm.interrupts.iter().enumerate() {
        let i = u32::try_from(i).unwrap_or(u32::MAX);
        index.entry(interrupt.name.value.as_str()).or_insert(i);
    }
    let text = super::type_text;
    let specs = fsm.interrupts.iter().map(|interrupt| {
        let (name, payload, resume) = (
            &interrupt.name.value,
            text(&interrupt.payload.value),
            text(&interrupt.resume.value),
        );
        quote!(#krate::interrupt::InterruptSpec { name: #name, payload: #payload, resume: #resume })
    });
    let ask_arms = rows.iter().filter_map(|(row, def)| {
        let interrupt = index.get(def.ask.as_ref()?.value.as_str())?;
        Some(quote!(#row => ::core::option::Option::Some(#interrupt)))
    });
    let payload_arms = fsm.interrupts.iter().enumerate().map(|(i, interrupt)| {
        let i = u32::try_from(i).unwrap_or(u32::MAX);
        let (name, ty) = (&interrupt.name.value, &interrupt.payload.value);
        let call = quote_spanned!(interrupt.payload.span.to_proc_macro()=> #private::interrupt_payload::<Self, #ty>);
        quote!(#i => #call(#name, agent))
    });
    let resume_arms = fsm.interrupts.iter().enumerate().map(|(i, interrupt)| {
        let i = u32::try_from(i).unwrap_or(u32::MAX);
        let (name, ty) = (&interrupt.name.value, &interrupt.resume.value);
        let call =
            quote_spanned!(interrupt.resume.span.to_proc_macro()=> #private::check_resume::<#ty>);
        quote!(#i => #call(#name, value))
    });
    quote! {
        const INTERRUPTS: &'static [#krate::interrupt::InterruptSpec] = &[#(#specs),*];

        #[inline(always)]
        #[allow(unreachable_patterns)]
        fn ask(row: u32) -> ::core::option::Option<u32> {
            match row {
                #(#ask_arms,)*
                _ => ::core::option::Option::None,
            }
        }

        #[allow(unreachable_patterns)]
        fn interrupt_payload(
            agent: &Self,
            interrupt: u32,
        ) -> ::core::result::Result<#private::serde_json::Value, #krate::ActionError> {
            match interrupt {
                #(#payload_arms,)*
                _ => ::core::result::Result::Err(#krate::ActionError::new("unknown interrupt")),
            }
        }

        #[allow(unreachable_patterns)]
        fn check_resume(
            interrupt: u32,
            value: &#private::serde_json::Value,
        ) -> ::core::result::Result<(), #krate::ActionError> {
            match interrupt {
                #(#resume_arms,)*
                _ => ::core::result::Result::Ok(()),
            }
        }
    }
}

/// Rows with their index in declaration order.
fn numbered<'a>(
    index: &std::collections::HashMap<*const RowDef, u32>,
    rows: &[&'a RowDef],
) -> Vec<(u32, &'a RowDef)> {
    rows.iter()
        .map(|r| (index[&std::ptr::from_ref(*r)], *r))
        .collect()
}

/// The rows of one trigger, tried in order:
/// `if g1(agent) { Fire(1, To1) } else if g2(agent) { Fire(2, To2) } else { Rejected }`.
/// Written inside the generated function, where `__S`, `__Step`, `__G` and `__R` name the state
/// enum, `Step`, `Guard` and `Result` (short paths: a 10,000-state machine has 20,000 arms); the
/// last guarded row is one `Step::guarded` call.
fn guarded(rows: &[(u32, &RowDef)], target: &dyn Fn(&RowDef) -> syn::Ident) -> TokenStream {
    // Empty until a row sets it: what runs when every later row's guard refuses.
    let mut body = TokenStream::new();
    for (index, row) in rows.iter().rev() {
        let to = target(row);
        let fire = if row.internal {
            quote!(__Step::Stay(#index))
        } else {
            quote!(__Step::Fire(#index, __S::#to))
        };
        body = match &row.guard {
            Some(guard) => {
                let name = path_text(&guard.value);
                let span = guard.span.to_proc_macro();
                let guard = rust_path(&guard.value);
                // Only the call is spanned: `agent` and `params` keep the generated code's
                // mixed-site hygiene (a guard may be called `agent`, or come from a
                // `macro_rules!` expansion).
                let (agent, params) = (local("agent"), local("params"));
                let check =
                    quote_spanned!(span=> __G::<Self, _>::check(&#guard, #name, #agent, #params));
                if body.is_empty() {
                    // The last row: one call, not a `match` per row.
                    quote!(__Step::guarded(#check, #fire, #index))
                } else {
                    quote! {
                        match #check {
                            __R::Ok(true) => #fire,
                            __R::Ok(false) => #body,
                            __R::Err(_) => __Step::GuardFailed(#index),
                        }
                    }
                }
            }
            None => fire,
        };
    }
    if body.is_empty() {
        quote!(__Step::Rejected)
    } else {
        body
    }
}

/// Up to this many rows, the transition function is always inlined into its callers.
const INLINE_ROWS: usize = 64;

/// Up to this many rows, the state enum's docs show the machine's Mermaid diagram.
const DOC_DIAGRAM_ROWS: usize = 200;

fn path_text(path: &syn::Path) -> String {
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    segments.join("::")
}

/// `ALL`, `name`, `from_name`, `Display`, and serde as the DSL name.
fn names_enum(
    ty: &syn::Ident,
    variants: &[syn::Ident],
    names: &[&str],
    what: &str,
    agent: &str,
    private: &TokenStream,
    rt: &TokenStream,
) -> TokenStream {
    let expected = names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let unknown = format!("unknown {what} `{{}}` of agent `{agent}`; expected one of: {expected}");
    let expecting = format!("the name of a {what} of agent `{agent}`");
    let name_doc = format!("The {what}'s name as declared.");
    let from_doc = format!("The {what} with this name, as declared.");
    quote! {
        impl #ty {
            /// Every value, in declaration order.
            pub const ALL: &'static [#ty] = &[#(#ty::#variants),*];

            #[doc = #name_doc]
            pub const fn name(self) -> &'static str {
                match self {
                    #(#ty::#variants => #names,)*
                }
            }

            #[doc = #from_doc]
            pub fn from_name(name: &str) -> ::core::option::Option<Self> {
                ::core::option::Option::Some(match name {
                    #(#names => Self::#variants,)*
                    _ => return ::core::option::Option::None,
                })
            }
        }

        impl #rt::FsmName for #ty {
            #[inline]
            fn name(self) -> &'static str {
                #ty::name(self)
            }
        }

        impl ::core::fmt::Display for #ty {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl #private::serde::Serialize for #ty {
            fn serialize<__S: #private::serde::Serializer>(&self, s: __S) -> ::core::result::Result<__S::Ok, __S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl<'de> #private::serde::Deserialize<'de> for #ty {
            fn deserialize<__D: #private::serde::Deserializer<'de>>(d: __D) -> ::core::result::Result<Self, __D::Error> {
                struct Visitor;
                impl<'de> #private::serde::de::Visitor<'de> for Visitor {
                    type Value = #ty;
                    fn expecting(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        f.write_str(#expecting)
                    }
                    fn visit_str<__E: #private::serde::de::Error>(self, v: &str) -> ::core::result::Result<#ty, __E> {
                        #ty::from_name(v).ok_or_else(|| __E::custom(::std::format!(#unknown, v)))
                    }
                }
                d.deserialize_str(Visitor)
            }
        }
    }
}

/// What `#[agent]` emits for an FSM agent beside its errors: the two enums with the variants
/// that are valid identifiers and a typed `cmd`, so code using them adds no errors of its own.
pub fn fsm_fallback(def: &AgentDef, fsm: &FsmDef, krate: &TokenStream) -> TokenStream {
    let agent = ident(&def.name.value, def.name.span);
    let state_ty = format_ident!("{}", state_enum(&def.name.value));
    let event_ty = format_ident!("{}", event_enum(&def.name.value));
    let valid =
        |ident: &Result<String, _>| matches!(ident, Ok(i) if !RESERVED.contains(&i.as_str()));
    let states = fsm
        .states()
        .into_iter()
        .filter(|s| valid(&rust_ident(&s.value, Case::AsWritten)))
        .map(|s| ident(&s.value, s.span));
    let events = fsm
        .events()
        .into_iter()
        .map(|e| rust_ident(&e.value, Case::UpperCamel))
        .filter(valid)
        .flatten()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|e| format_ident!("{}", e));
    quote! {
        #[allow(dead_code)]
        pub enum #state_ty { #(#states),* }
        // Code printing the diagrams reports nothing more.
        #[allow(dead_code)]
        impl #state_ty {
            pub const DOT: &'static str = "";
            pub const MERMAID: &'static str = "";
        }
        #[allow(dead_code)]
        #[derive(Clone, Copy)]
        pub enum #event_ty { #(#events),* }
        impl #event_ty {
            #[allow(dead_code)]
            pub fn with(self, _: #krate::__private::serde_json::Value) -> Self {
                self
            }
        }
        impl #krate::Command<#agent> for #event_ty {
            type Output = ::core::result::Result<::std::vec::Vec<#krate::Directive>, #krate::AgentError>;
            fn run(self, _: &mut #krate::Agent<#agent>) -> Self::Output {
                ::core::unreachable!("`#[agent]` reported an error for this agent")
            }
        }
    }
}

/// `items` grouped by key, in the order each key first appears.
fn group_by_key<K: std::hash::Hash + Eq + Clone, T>(
    items: impl Iterator<Item = (K, T)>,
) -> Vec<(K, Vec<T>)> {
    let mut groups: Vec<(K, Vec<T>)> = Vec::new();
    let mut by_key: std::collections::HashMap<K, usize> = std::collections::HashMap::new();
    for (key, item) in items {
        match by_key.get(&key) {
            Some(&group) => groups[group].1.push(item),
            None => {
                by_key.insert(key.clone(), groups.len());
                groups.push((key, vec![item]));
            }
        }
    }
    groups
}

/// The rows that name something (a guard, an action), grouped by what they name as written,
/// in the order each is first named: `(row numbers, the first row's name)`.
fn grouped_rows<'a>(
    indexed: &[(u32, &'a RowDef)],
    named: impl Fn(&'a RowDef) -> Option<&'a crate::model::Spanned<syn::Path>>,
) -> impl Iterator<Item = (Vec<u32>, &'a crate::model::Spanned<syn::Path>)> {
    let named = indexed.iter().filter_map(|(i, row)| {
        let name = named(row)?;
        Some((path_text(&name.value), (*i, name)))
    });
    group_by_key(named).into_iter().map(|(_, rows)| {
        let first = rows[0].1;
        (rows.into_iter().map(|(i, _)| i).collect(), first)
    })
}
