//! The tour: a finite-state machine agent runs in the agent server, driven by signals; a timer
//! fires; a checkpoint is written to `.stratagem/` and thawed on the next run. Then a
//! behaviour-tree agent tidies the café, ticked by the server until its tree succeeds.
//!
//! Run it twice: `cargo run --example quickstart`. The second run resumes the barista from its
//! checkpoint, coffee still brewing. `-- --fresh` forgets the checkpoint first.

use std::time::Duration;

use stratagem::prelude::*;
use stratagem::server::ServerError;
use stratagem::store::{RedbStore, Store};
use tracing_subscriber::EnvFilter;

/// A barista: takes an order, brews for two seconds (a timer), hands the cup over.
#[agent(
    strategy = Fsm,
    transitions {
        initial Idle
        Idle    -> Brewing on order   do take_order
        Brewing -> Ready   after 2s   do pour
        Ready   -> Idle    on collect do hand_over
    },
    routes {
        "cafe.order" => order
        "cafe.collect" => collect
    }
)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Barista {
    /// The drink being made.
    drink: Option<String>,
    /// Cups handed over, over every run.
    served: u32,
}

/// What a customer orders, as the `cafe.order` signal carries it.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Drink {
    name: String,
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

/// A tidying robot: wipes three tables, refilling its water when it runs low.
#[agent(strategy = BehaviorTree, tree = Tidy, tick = 50ms)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Tidier {
    /// Water left, in wipes.
    water: u8,
    /// Progress on the current table, in passes.
    passes: u8,
    /// Tables wiped.
    wiped: u32,
}

bt! {
    for Tidier
    behavior Tidy {
        sequence {
            repeat(3) {
                sequence {
                    selector { condition has_water  retry(2) { action refill } }
                    timeout(1s) { action wipe_table(passes = 2) }
                }
            }
            action announce(message = "the café is tidy")
        }
    }
}

fn has_water(tidier: &Tidier) -> bool {
    tidier.water > 0
}

/// Fills the tank: two wipes' worth.
#[action]
fn refill(tidier: &mut Tidier) -> Outcome {
    tidier.water = 2;
    Outcome::new().emit(Signal::new("tidy.progress", json!("refilled the water")))
}

#[derive(Debug, Deserialize, JsonSchema, Params)]
struct Wipe {
    passes: u8,
}

/// One pass per tick: Running until the table has had its passes.
#[action]
fn wipe_table(tidier: &mut Tidier, wipe: Wipe) -> Outcome {
    tidier.passes += 1;
    if tidier.passes < wipe.passes {
        return Outcome::new().in_progress();
    }
    tidier.passes = 0;
    tidier.water -= 1;
    tidier.wiped += 1;
    let note = format!("wiped table {}", tidier.wiped);
    Outcome::new().emit(Signal::new("tidy.progress", json!(note)))
}

#[derive(Debug, Deserialize, JsonSchema, Params)]
struct Announcement {
    message: String,
}

/// The tree's last leaf.
#[action]
fn announce(_tidier: &mut Tidier, announcement: Announcement) -> Outcome {
    Outcome::new().emit(Signal::new("tidy.progress", json!(announcement.message)))
}

const ID: &str = "barista-1";
const MENU: [&str; 3] = ["flat white", "espresso", "tea"];

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The runtime's `tracing` events, quiet unless asked: `RUST_LOG=stratagem=debug` prints
    // every transition, action run, directive and emitted signal.
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()))
        .without_time()
        .init();
    let store = RedbStore::open_default()?;
    println!("checkpoints live in {}", RedbStore::DEFAULT_PATH);
    if std::env::args().any(|a| a == "--fresh") && store.delete(ID).await? {
        println!("forgot the previous checkpoint");
    }
    println!(
        "the machine (BaristaState::MERMAID):\n{}",
        BaristaState::MERMAID
    );

    // Thaw the barista where the last run left it, or start a new one.
    let barista = match AgentServer::<Barista>::thaw(&store, ID, Options::default()).await {
        Ok(barista) => {
            let state = barista.state().await?;
            let snapshot = barista.snapshot().await?;
            println!(
                "resumed `{ID}` from its checkpoint: in state {}, {} cup(s) served before, `{}` on the go",
                snapshot.details["state"],
                state.served,
                state.drink.as_deref().unwrap_or("nothing")
            );
            barista
        }
        Err(ServerError::Checkpoint { .. }) if store.load(ID).await?.is_none() => {
            println!("first run: starting `{ID}` fresh");
            AgentServer::start(Barista::new().with_id(ID), Options::default()).await?
        }
        Err(other) => return Err(other.into()),
    };
    // Subscribe before looking at the state, so a timer firing in between is not missed.
    let mut events = barista.subscribe();

    if barista.state().await?.drink.is_none() {
        // Something the café does not serve: the action fails, nothing changes.
        let outcome = barista
            .call(Signal::new("cafe.order", json!({ "name": "mojito" })))
            .await?;
        for error in outcome.errors() {
            println!("> cafe.order mojito: {error}");
        }
        let outcome = barista
            .call(Signal::new("cafe.order", json!({ "name": "flat white" })))
            .await?;
        println!(
            "> cafe.order flat white: now {}",
            outcome.snapshot.details["state"]
        );
    }

    if barista.snapshot().await?.details["state"] == "Brewing" {
        // Collecting before the drink is ready is not a transition of the machine.
        let outcome = barista.call(Signal::new("cafe.collect", json!({}))).await?;
        for error in outcome.errors() {
            println!("> cafe.collect too early: {error}");
        }

        // `Brewing -> Ready after 2s`: the server's timer fires and `pour` emits `cafe.ready`.
        println!("  waiting for the brewing timer...");
        let ready = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                let signal = events.recv().await?;
                if signal.signal_type == "cafe.ready" {
                    return Ok::<_, tokio::sync::broadcast::error::RecvError>(signal);
                }
            }
        })
        .await??;
        println!("  the timer fired: `{}` {}", ready.signal_type, ready.data);
    } else {
        println!("  the brewing timer came due while the agent slept: it fired on thaw");
    }

    let outcome = barista.call(Signal::new("cafe.collect", json!({}))).await?;
    let served = barista.state().await?.served;
    println!(
        "> cafe.collect: now {}, {served} cup(s) served in all",
        outcome.snapshot.details["state"]
    );

    // Order the next drink and hibernate while it brews: the pending timer goes into the
    // checkpoint with the agent's state and the machine's position.
    let next = MENU[served as usize % MENU.len()];
    barista
        .call(Signal::new("cafe.order", json!({ "name": next })))
        .await?;
    let report = barista.hibernate(&store).await?;
    println!(
        "hibernated `{ID}` brewing `{next}`: {} signal(s) handled, {} pending timer(s) in the checkpoint",
        report.processed,
        report.pending_timers.len()
    );

    // A behaviour tree in the server: it starts Running, so the server ticks it every 50 ms
    // until the tree succeeds or fails.
    let tidier = AgentServer::start(Tidier::new(), Options::default()).await?;
    let mut progress = tidier.subscribe();
    let done = tidier.await_completion(Duration::from_secs(10)).await?;
    while let Ok(signal) = progress.try_recv() {
        println!("  tidier: {}", signal.data.as_str().unwrap_or_default());
    }
    println!(
        "the tidier finished: {:?} after {} ticks, {} table(s) wiped",
        done.status,
        done.details["ticks"],
        tidier.state().await?.wiped
    );
    tidier.stop().await;

    println!("run the example again to resume the barista");
    Ok(())
}
