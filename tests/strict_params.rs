//! Parameters mean what the action's schema says, and errors stay small whatever was sent:
//! in-process (`cmd`) and under the server.

use stratagem::params::Lenient;
use stratagem::prelude::*;
use stratagem::server::ServerError;
use stratagem::{ActionErrorKind, AgentError};

#[agent(
    strategy = Direct,
    actions [pay, tag],
    routes {
        "shop.pay" => pay
        "shop.tag" => tag
    }
)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Shop {
    paid: Vec<u64>,
    tags: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Payment {
    amount: u64,
    card: Card,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Card {
    number: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Tag {
    name: String,
}

/// Records a payment.
#[action]
fn pay(shop: &mut Shop, payment: Payment) {
    assert!(!payment.card.number.is_empty());
    shop.paid.push(payment.amount);
}

/// Adds a tag; older clients send extra fields, which this action tolerates.
#[action]
fn tag(shop: &mut Shop, tag: Lenient<Tag>) {
    shop.tags.push(tag.into_inner().name);
}

/// The one error of a `cmd` that must fail, as (kind, message).
fn refusal(
    shop: &mut Agent<Shop>,
    action: &str,
    params: serde_json::Value,
) -> (ActionErrorKind, String) {
    let out = shop.cmd(Instruction::new(action, params));
    let [Directive::Error { error, .. }] = out.as_slice() else {
        panic!("expected one error, got {out:?}");
    };
    let AgentError::Action { error, .. } = error else {
        panic!("expected an action error, got {error:?}");
    };
    (error.kind(), error.message().to_string())
}

#[test]
fn parameters_are_decoded_with_the_closed_schema_the_action_advertises() {
    let mut shop = Shop::new();
    let spec = shop.action_spec("pay").unwrap();
    assert_eq!(spec.parameters["additionalProperties"], false);

    let (kind, message) = refusal(
        &mut shop,
        "pay",
        json!({"amount": 5, "card": {"number": "4242", "cvv": "123"}}),
    );
    assert_eq!(kind, ActionErrorKind::InvalidParams);
    assert_eq!(
        message,
        "invalid parameters for `pay`: at `card.cvv`: unknown field `cvv`, expected `number`"
    );
    // An unknown field is refused whatever its size.
    let (_, message) = refusal(
        &mut shop,
        "pay",
        json!({"amount": 5, "card": {"number": "1"}, "blob": "b".repeat(100_000)}),
    );
    assert!(
        message.contains("at `blob`: unknown field `blob`"),
        "{message}"
    );
    // An array is not an object, though serde would read it as the fields in order.
    let (_, message) = refusal(&mut shop, "pay", json!([5, {"number": "1"}]));
    assert_eq!(
        message,
        "invalid parameters for `pay`: invalid type: sequence, expected struct Payment"
    );
    assert!(shop.state().paid.is_empty(), "nothing ran");

    shop.cmd(Instruction::new(
        "pay",
        json!({"amount": 5, "card": {"number": "1"}}),
    ));
    assert_eq!(shop.state().paid, [5]);
}

#[test]
fn lenient_is_the_per_action_opt_out() {
    let mut shop = Shop::new();
    let out = shop.cmd(Instruction::new(
        "tag",
        json!({"name": "vip", "colour": "gold"}),
    ));
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(shop.state().tags, ["vip"]);
    let spec = shop.action_spec("tag").unwrap();
    assert_eq!(
        spec.parameters["additionalProperties"], false,
        "models are still told the exact shape"
    );
}

#[test]
fn a_ten_megabyte_bad_parameter_gives_a_short_error() {
    let mut shop = Shop::new();
    let huge = "9".repeat(10_000_000);
    let (kind, message) = refusal(
        &mut shop,
        "pay",
        json!({"amount": huge, "card": {"number": "1"}}),
    );
    assert_eq!(kind, ActionErrorKind::InvalidParams);
    assert!(message.len() < 300, "{} bytes", message.len());
    assert!(message.ends_with("…\" (10 MB), expected u64"), "{message}");
    // A huge unknown action name is cut the same way.
    let out = shop.cmd(Instruction::new("x".repeat(10_000_000), json!({})));
    let rendered = serde_json::to_string(&out).unwrap();
    assert!(rendered.len() < 1_000, "{} bytes", rendered.len());
    assert!(rendered.contains("… (10 MB)"), "{rendered}");
}

#[tokio::test]
async fn under_the_server_errors_are_bounded_and_oversized_signals_refused_at_the_door() {
    let server = AgentServer::start(Shop::new(), Options::default().max_signal_bytes(20_000_000))
        .await
        .unwrap();
    let outcome = server
        .call(Signal::new(
            "shop.pay",
            json!({"amount": "9".repeat(10_000_000), "card": {"number": "1"}}),
        ))
        .await
        .unwrap();
    let errors: Vec<String> = outcome.errors().map(ToString::to_string).collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].len() < 400, "{} bytes", errors[0].len());
    assert!(errors[0].contains("at `amount`"), "{}", errors[0]);

    let strict = AgentServer::start(Shop::new(), Options::default().max_signal_bytes(1_000))
        .await
        .unwrap();
    let err = strict
        .call(Signal::new("shop.tag", json!({"name": "n".repeat(2_000)})))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ServerError::SignalTooLarge { limit: 1_000, .. }),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "signal \"shop.tag\" to agent `Shop` (`{}`) was refused: as JSON it takes more than 1 KB (`Options::max_signal_bytes`); nothing was processed: send less, or raise the limit",
            strict.id()
        )
    );
    assert!(
        strict
            .cast(Signal::new("shop.tag", json!({"name": "n".repeat(2_000)})))
            .is_err()
    );
    assert!(
        strict.state().await.unwrap().tags.is_empty(),
        "nothing processed"
    );
    strict
        .call(Signal::new("shop.tag", json!({"name": "small"})))
        .await
        .unwrap();
    assert_eq!(strict.state().await.unwrap().tags, ["small"]);
}
