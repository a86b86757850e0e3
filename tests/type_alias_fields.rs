//! Fields whose type is a type alias, in the state and in an action's parameters: the derives
//! and the schema see the aliased type, and a tree's arguments to an alias-typed parameter are
//! accepted at build time (the `Params` derive reads types as written, before aliases resolve)
//! and decoded by `Deserialize` at run time.

use std::time::Duration;

use stratagem::bt::{ArgType, Params, Status as Tree, TreeRun};
use stratagem::prelude::*;

type Count = u32;
type Speed = u8;
type Label = String;

#[agent(
    strategy = BehaviorTree,
    tree = { sequence { action step(by = 2)  action tag(label = "east") } },
    actions [step, tag],
)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Walker {
    steps: Count,
    label: Label,
}

#[derive(Debug, Deserialize, JsonSchema, Params)]
struct Step {
    by: Speed,
}

#[derive(Debug, Deserialize, JsonSchema, Params)]
struct Tag {
    label: Label,
}

#[action]
fn step(walker: &mut Walker, params: Step) {
    walker.steps += Count::from(params.by);
}

#[action]
fn tag(walker: &mut Walker, params: Tag) {
    walker.label = params.label;
}

#[test]
fn alias_typed_state_and_parameters_run_in_a_tree() {
    let mut walker = Walker::new();
    walker.tick();
    assert_eq!(walker.state().steps, 2);
    assert_eq!(walker.state().label, "east");
    // The state round-trips through serde like any other field.
    let json = serde_json::to_value(walker.state()).unwrap();
    assert_eq!(json, json!({"steps": 2, "label": "east"}));
}

#[test]
fn the_schema_sees_the_aliased_type() {
    let step = Walker::actions().iter().find(|a| a.name == "step").unwrap();
    let schema = step.spec().parameters;
    assert_eq!(schema["properties"]["by"]["type"], "integer", "{schema}");
    assert_eq!(schema["properties"]["by"]["maximum"], 255, "{schema}");
}

#[test]
fn an_alias_typed_parameter_is_judged_when_the_tree_runs() {
    // Read as written, `Speed` is a name the derive does not know: any argument compiles.
    assert_eq!(<Step as Params>::FIELDS[0].ty, ArgType::Any);
    let tree = bt! { action step(by = "fast") };
    let mut walker = Walker::default();
    let report = TreeRun::default().tick(&tree, &mut walker, Duration::ZERO);
    assert_eq!(report.status, Tree::Failure);
    let [Directive::Error { error, .. }] = report.directives.as_slice() else {
        panic!("{:?}", report.directives)
    };
    assert!(
        error.to_string().contains("invalid parameters for `step`"),
        "{error}"
    );
    assert_eq!(walker.steps, 0);
}
