//! The ReAct helpdesk of `agents/helpdesk.agent`, run on the scripted model: the file's options
//! become the same configuration `#[agent(strategy = React, ...)]` would generate, and the
//! model's tool calls reach the file's tools.

use std::sync::Arc;

use order_service::agents::Helpdesk;
use stratagem::ai::{AiAgent, AiConfig, AiRunner, ModelTable, ScriptedModel};
use stratagem::prelude::*;

#[test]
fn the_file_options_become_the_configuration() {
    let expected = AiConfig::new("fast")
        .system("You answer customers and open tickets when needed.")
        .tools(&["lookup_order", "open_ticket"])
        .max_iterations(8);
    assert_eq!(Helpdesk::AI, expected);
    let names: Vec<&str> = Helpdesk::actions().iter().map(|a| a.name).collect();
    assert_eq!(names, ["lookup_order", "open_ticket"]);
}

#[tokio::test]
async fn the_helpdesk_answers_with_its_tools() {
    let model = ScriptedModel::parse(
        r#"
        user "Where is order 7?"
        call lookup_order {"id": 7}
        call open_ticket {"subject": "order 7 is late"}
        answer "Order 7 is late; I opened a ticket."
        "#,
    )
    .unwrap();
    let runner = AiRunner::new(ModelTable::standard(
        Arc::new(model.clone()),
        "small",
        "large",
    ));
    let mut desk = Helpdesk::new();
    let answer = desk.ask(&runner, "Where is order 7?").await.unwrap();
    assert_eq!(answer.answer(), Some("Order 7 is late; I opened a ticket."));
    assert_eq!(desk.state().tickets, ["order 7 is late"]);
    model.assert_finished();
}
