//! A support agent that answers in a few ReAct steps with two tools: it looks an order up and
//! opens a ticket when the order is late.
//!
//! ```text
//! cargo run --example helpdesk                       # offline, on the scripted model
//! cargo run --example helpdesk -- --base-url http://127.0.0.1:11434/v1 --model llama3.2
//!         [--question "Where is my order 1002?"]     # a real endpoint (key: $OPENAI_API_KEY)
//! ```
//!
//! Offline it runs the real strategy, tools and runner against a scripted model (see
//! `ScriptedModel`), so it prints the same kind of steps a real model would produce.

use std::sync::Arc;

use stratagem::ai::{AiRunner, Hooks, ModelTable, OpenAiCompatible, ScriptedModel, Step};
use stratagem::prelude::*;

/// The helpdesk of an online shop.
#[agent(
    strategy = React,
    model = "fast",
    system = "You are the helpdesk of an online shop. Look orders up before answering. When an order is late, open a ticket and give the customer its number. Answer in two sentences at most.",
    tools = [lookup_order, open_ticket],
    max_iterations = 6,
    hooks = PRINT_STEPS
)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Helpdesk {
    /// Tickets opened so far.
    pub tickets: Vec<Ticket>,
}

/// A support ticket.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Ticket {
    /// Its number.
    pub id: u32,
    /// The order it is about.
    pub order: u32,
    /// What is wrong.
    pub subject: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct LookupOrder {
    /// The order number, such as 1002.
    order: u32,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct OpenTicket {
    /// The order the ticket is about.
    order: u32,
    /// One line saying what is wrong.
    subject: String,
}

/// The shop's orders (a database in real life).
const ORDERS: &[(u32, &str, &str)] = &[
    (1001, "delivered", "delivered on Monday"),
    (
        1002,
        "late",
        "was due on Tuesday; the carrier reports a delay",
    ),
    (1003, "processing", "ships tomorrow"),
];

/// Looks an order up: its status and what the carrier says.
#[action]
fn lookup_order(_desk: &Helpdesk, params: LookupOrder) -> Result<Outcome, ActionError> {
    match ORDERS.iter().find(|(id, ..)| *id == params.order) {
        Some((id, status, note)) => Ok(Outcome::new().reply(json!({
            "order": id, "status": status, "note": note,
        }))),
        None => Err(ActionError::new(format!(
            "there is no order {}",
            params.order
        ))),
    }
}

/// Opens a support ticket about an order and returns its number.
#[action]
fn open_ticket(desk: &mut Helpdesk, params: OpenTicket) -> Outcome {
    let id = 500 + desk.tickets.len() as u32 + 1;
    desk.tickets.push(Ticket {
        id,
        order: params.order,
        subject: params.subject,
    });
    Outcome::new().reply(json!({ "ticket": id }))
}

/// Prints each step as it happens.
static PRINT_STEPS: Hooks<Helpdesk> = Hooks::new()
    .on_step_start(|desk: &Helpdesk, step: Step<'_>| {
        println!(
            "\nstep {} ({} tickets open)",
            step.number,
            desk.tickets.len()
        )
    })
    .on_reason(
        |_: &Helpdesk, _: Step<'_>, response: &stratagem::ai::LlmResponse| {
            if response.tool_calls.is_empty() {
                println!("  the model answers");
            } else if !response.text.is_empty() {
                println!("  reasoning:   {}", response.text.trim());
            }
        },
    )
    .on_act(
        |_: &Helpdesk, _: Step<'_>, calls: &[stratagem::ai::ToolCall]| {
            for call in calls {
                println!("  tool call:   {}({})", call.name, call.arguments);
            }
        },
    )
    .on_observe(
        |_: &Helpdesk, _: Step<'_>, results: &[stratagem::ai::ToolResult]| {
            for result in results {
                println!("  observation: {} -> {}", result.name, result.content);
            }
        },
    );

const QUESTION: &str = "Hi, my order 1002 hasn't arrived yet. Where is it?";

/// What the scripted model answers to `QUESTION`: what a good model would do.
const SCRIPT: &str = r#"
user "Hi, my order 1002 hasn't arrived yet. Where is it?"
say "I should look order 1002 up first."
call lookup_order {"order": 1002}
say "The order is late, so I will open a ticket for it."
call open_ticket {"order": 1002, "subject": "Order 1002 is late: carrier reports a delay"}
answer "Your order 1002 is delayed at the carrier; it was due on Tuesday. I opened ticket #501 so we can follow up, and we will email you as soon as it moves."
"#;

struct Args {
    base_url: Option<String>,
    model: String,
    question: String,
}

fn args() -> Result<Args, String> {
    let mut args = Args {
        base_url: None,
        model: "llama3.2".to_string(),
        question: QUESTION.to_string(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("`{name}` needs a value"));
        match flag.as_str() {
            "--base-url" => args.base_url = Some(value("--base-url")?),
            "--model" => args.model = value("--model")?,
            "--question" => args.question = value("--question")?,
            "-h" | "--help" => {
                return Err("usage: helpdesk [--base-url URL --model ID [--question TEXT]]".into());
            }
            other => return Err(format!("unknown argument `{other}`; try `--help`")),
        }
    }
    if args.base_url.is_none() && args.question != QUESTION {
        return Err("`--question` needs a real model: add `--base-url` and `--model` (offline, the scripted model only knows its own question)".into());
    }
    Ok(args)
}

#[tokio::main]
async fn main() {
    let args = match args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(2);
        }
    };
    let models = match &args.base_url {
        Some(url) => {
            let provider = OpenAiCompatible::new(url).api_key_env("OPENAI_API_KEY");
            println!("model: `{}` at {url}", args.model);
            ModelTable::new().alias("fast", Arc::new(provider), &args.model)
        }
        None => {
            println!("model: scripted (offline; pass --base-url and --model for a real one)");
            let script = ScriptedModel::parse(SCRIPT).expect("the script parses");
            ModelTable::new().alias("fast", Arc::new(script), "scripted")
        }
    };
    let runner = AiRunner::new(models);
    let mut desk = Helpdesk::new();
    println!("customer: {}", args.question);
    match desk.ask(&runner, &args.question).await {
        Ok(answer) => {
            println!(
                "\nanswer ({} steps, {} tokens): {}",
                answer.result.steps,
                answer.result.usage.total_tokens,
                answer.answer().unwrap_or("(none)")
            );
            for ticket in &desk.state().tickets {
                println!(
                    "ticket #{} for order {}: {}",
                    ticket.id, ticket.order, ticket.subject
                );
            }
        }
        Err(error) => {
            eprintln!("\nthe helpdesk could not answer: {error}");
            std::process::exit(1);
        }
    }
}
