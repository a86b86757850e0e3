//! The café the inspector example watches: a barista (an FSM), a patrol robot (a behaviour
//! tree) and a helpdesk (a ReAct agent on a scripted model), started in one agent server and
//! kept busy by [`Cafe::drive`]. The browser test starts the same café.

use std::sync::Arc;
use std::time::Duration;

use stratagem::ai::{ModelTable, ScriptedModel};
use stratagem::prelude::*;
use stratagem::server::ServerError;
use stratagem::strategy::RESTART_SIGNAL;

/// A barista: takes an order, brews (a timer), hands the cup over.
#[agent(
    strategy = Fsm,
    transitions {
        initial Idle
        Idle    -> Brewing on order   do take_order
        Brewing -> Ready   after 1500ms do pour
        Ready   -> Idle    on collect do hand_over
    },
    routes {
        "cafe.order" => order
        "cafe.collect" => collect
    }
)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Barista {
    /// The drink being made.
    pub(crate) drink: Option<String>,
    /// Cups handed over.
    pub(crate) served: u32,
}

/// What a customer orders.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Drink {
    /// The drink's name.
    pub(crate) name: String,
}

/// Writes the order down; refuses what the café does not serve.
#[action]
fn take_order(barista: &mut Barista, drink: Drink) -> Result<(), ActionError> {
    if !["flat white", "espresso", "tea"].contains(&drink.name.as_str()) {
        return Err(ActionError::new(format!(
            "we do not serve `{}`",
            drink.name
        )));
    }
    barista.drink = Some(drink.name);
    Ok(())
}

/// The brewing timer fired: announce the drink.
#[action]
fn pour(barista: &mut Barista) -> Outcome {
    let drink = barista.drink.clone().unwrap_or_default();
    Outcome::new().emit(Signal::new("cafe.ready", json!({ "drink": drink })))
}

/// The customer collected the cup.
#[action]
fn hand_over(barista: &mut Barista) {
    barista.drink = None;
    barista.served += 1;
}

/// A patrol robot on a line: visits its targets in turn, recharging when low.
#[agent(strategy = BehaviorTree, tree = Patrol, tick = 150ms)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Rover {
    /// Battery left, in percent.
    pub(crate) battery: u8,
    /// Where it is.
    pub(crate) position: i32,
    /// Where it goes.
    pub(crate) target: i32,
    /// Targets reached.
    pub(crate) reached: u32,
}

bt! {
    for Rover
    pub(crate) behavior Patrol {
        sequence {
            repeat(3) {
                sequence {
                    selector {
                        condition battery_ok
                        action recharge
                    }
                    action pick_target
                    timeout(5s) { action move_to(speed = 1) }
                }
            }
            action report(channel = "base")
        }
    }
}

/// Enough battery for the next leg.
fn battery_ok(rover: &Rover) -> bool {
    rover.battery >= 30
}

/// Charges a quarter per tick until full.
#[action]
fn recharge(rover: &mut Rover) -> bt::Status {
    rover.battery = rover.battery.saturating_add(25).min(100);
    if rover.battery < 100 {
        bt::Status::Running
    } else {
        bt::Status::Success
    }
}

/// The next target: the line's four stops in turn.
#[action]
fn pick_target(rover: &mut Rover) {
    const STOPS: [i32; 4] = [4, 0, 6, 2];
    rover.target = STOPS[rover.reached as usize % STOPS.len()];
}

#[derive(Debug, Deserialize, JsonSchema, Params)]
struct Move {
    /// Steps per tick.
    speed: i32,
}

/// One step per tick towards the target.
#[action]
fn move_to(rover: &mut Rover, params: Move) -> bt::Status {
    rover.position += params.speed * (rover.target - rover.position).signum();
    rover.battery = rover.battery.saturating_sub(7);
    if rover.position == rover.target {
        rover.reached += 1;
        bt::Status::Success
    } else {
        bt::Status::Running
    }
}

#[derive(Debug, Deserialize, JsonSchema, Params)]
struct Channel {
    channel: String,
}

/// Reports the round.
#[action]
fn report(rover: &mut Rover, params: Channel) -> Outcome {
    Outcome::new().emit(Signal::new(
        "patrol.report",
        json!({ "channel": params.channel, "reached": rover.reached }),
    ))
}

/// The helpdesk of an online shop.
#[agent(
    strategy = React,
    model = "desk",
    system = "You are the helpdesk of an online shop. Look orders up before answering. When an order is late, open a ticket.",
    tools = [lookup_order, open_ticket],
    max_iterations = 6
)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Helpdesk {
    /// Tickets opened so far.
    pub(crate) tickets: Vec<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct LookupOrder {
    /// The order number, such as 1002.
    order: u32,
}

/// Looks an order up.
#[action]
fn lookup_order(_desk: &Helpdesk, params: LookupOrder) -> Outcome {
    let status = if params.order == 1002 {
        "late"
    } else {
        "delivered"
    };
    Outcome::new().reply(json!({ "order": params.order, "status": status }))
}

#[derive(Debug, Deserialize, JsonSchema)]
struct OpenTicket {
    /// The order the ticket is about.
    order: u32,
}

/// Opens a support ticket and returns its number.
#[action]
fn open_ticket(desk: &mut Helpdesk, params: OpenTicket) -> Outcome {
    let id = 500 + desk.tickets.len() as u32 + 1;
    desk.tickets.push(params.order);
    Outcome::new().reply(json!({ "ticket": id }))
}

/// The question the scripted model knows.
pub(crate) const QUESTION: &str = "Hi, my order 1002 hasn't arrived yet. Where is it?";

/// One conversation: what a good model would do, a step at a time.
const SCRIPT: &str = r#"
user "Hi, my order 1002 hasn't arrived yet. Where is it?"
say "I should look order 1002 up first."
call lookup_order {"order": 1002}
say "The order is late, so I will open a ticket for it."
call open_ticket {"order": 1002}
answer "Your order 1002 is delayed at the carrier. I opened a ticket so we can follow up."
"#;

/// How many times the helpdesk can be asked before its script runs out.
const CONVERSATIONS: usize = 200;

/// The three agents, running.
pub(crate) struct Cafe {
    /// The barista.
    pub(crate) barista: AgentServer<Barista>,
    /// The patrol robot.
    pub(crate) rover: AgentServer<Rover>,
    /// The helpdesk.
    pub(crate) helpdesk: AgentServer<Helpdesk>,
}

impl Cafe {
    /// Starts the three agents. The scripted model takes `think` per answer, so its steps can
    /// be watched.
    pub(crate) async fn open(think: Duration) -> Result<Cafe, ServerError> {
        let script = ScriptedModel::parse(&SCRIPT.repeat(CONVERSATIONS))
            .expect("the script parses")
            .latency(think);
        let models = ModelTable::new().alias("desk", Arc::new(script), "scripted");
        Ok(Cafe {
            barista: AgentServer::start(Barista::new(), Options::default()).await?,
            rover: AgentServer::start(
                Agent::new(Rover {
                    battery: 40,
                    ..Rover::default()
                }),
                Options::default(),
            )
            .await?,
            helpdesk: AgentServer::start(Helpdesk::new(), Options::default().models(models))
                .await?,
        })
    }

    /// Keeps the café busy until the task is dropped: an order every few seconds (now and then
    /// one the barista refuses), the patrol restarted when its round ends, a customer at the
    /// helpdesk every twenty seconds.
    pub(crate) async fn drive(&self) {
        let drinks = ["flat white", "espresso", "hot chocolate", "tea"];
        for round in 0usize.. {
            let drink = drinks[round % drinks.len()];
            let _ = self
                .barista
                .cast(Signal::new("cafe.order", json!({ "name": drink })));
            if round % 8 == 0 {
                let query = json!({ "query": QUESTION, "request_id": format!("customer-{round}") });
                let _ = self.helpdesk.cast(Signal::new("ai.query", query));
            }
            tokio::time::sleep(Duration::from_millis(2000)).await;
            let _ = self.barista.cast(Signal::new("cafe.collect", json!({})));
            if self.rover.snapshot().await.is_ok_and(|s| s.done()) {
                let _ = self.rover.cast(Signal::new(RESTART_SIGNAL, json!({})));
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
}
