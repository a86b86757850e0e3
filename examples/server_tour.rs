//! The agent server, end to end: an agent driven by signals in its own tokio task, a timer
//! firing, a checkpoint written to `.stratagem/` and thawed on the next run.
//!
//! Run it twice: `cargo run --example server_tour`. The second run resumes the agent from its
//! checkpoint. `-- --fresh` forgets the checkpoint first.

use std::time::Duration;

use stratagem::prelude::*;
use stratagem::server::ServerError;
use stratagem::store::{RedbStore, Store};

/// A kettle: filled, heated and boiled through signals.
#[agent(
    strategy = Direct,
    actions [fill, heat, boiled, remind, descale],
    routes {
        "kettle.fill" => fill
        "kettle.heat" => heat
        "kettle.boiled" => boiled
        "kettle.remind" => remind
        "kettle.descale" => descale
    }
)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Kettle {
    litres: f64,
    heating: bool,
    boils: u32,
    reminder_set: bool,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Fill {
    litres: f64,
}

/// Fills the kettle; it holds at most 1.7 litres.
#[action]
fn fill(kettle: &mut Kettle, fill: Fill) -> Result<(), ActionError> {
    kettle.litres += fill.litres;
    if kettle.litres > 1.7 {
        return Err(ActionError::new(format!(
            "a kettle holds at most 1.7 litres, not {:.1}",
            kettle.litres
        )));
    }
    Ok(())
}

/// Starts heating: the water boils one second later (a `Schedule` timer).
#[action]
fn heat(kettle: &mut Kettle) -> Result<Outcome, ActionError> {
    if kettle.litres == 0.0 {
        return Err(ActionError::new("the kettle is empty"));
    }
    kettle.heating = true;
    Ok(Outcome::new().schedule(
        Duration::from_secs(1),
        Signal::new("kettle.boiled", json!({})),
    ))
}

/// The timer fired: the water boils.
#[action]
fn boiled(kettle: &mut Kettle) -> Outcome {
    kettle.heating = false;
    kettle.boils += 1;
    Outcome::new().emit(Signal::new(
        "kettle.ready",
        json!({ "litres": kettle.litres, "boils": kettle.boils }),
    ))
}

/// Schedules a descaling reminder in 30 days, once: it is still pending when the kettle
/// hibernates, and the checkpoint carries it from run to run.
#[action]
fn remind(kettle: &mut Kettle) -> Outcome {
    if kettle.reminder_set {
        return Outcome::new();
    }
    kettle.reminder_set = true;
    Outcome::new().schedule(
        Duration::from_secs(30 * 24 * 3600),
        Signal::new("kettle.descale", json!({})),
    )
}

/// The reminder fired.
#[action]
fn descale(kettle: &mut Kettle) -> Outcome {
    kettle.reminder_set = false;
    Outcome::new().emit(Signal::new("kettle.descale_now", json!({})))
}

const ID: &str = "kettle-1";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let store = RedbStore::open_default()?;
    println!("checkpoints live in {}", RedbStore::DEFAULT_PATH);
    if std::env::args().any(|a| a == "--fresh") && store.delete(ID).await? {
        println!("forgot the previous checkpoint");
    }

    let kettle = match AgentServer::<Kettle>::thaw(&store, ID, Options::default()).await {
        Ok(kettle) => {
            let state = kettle.state().await?;
            println!(
                "resumed `{ID}` from its checkpoint: {:.1} litres, boiled {} time(s) before",
                state.litres, state.boils
            );
            kettle
        }
        Err(ServerError::Checkpoint { .. }) if store.load(ID).await?.is_none() => {
            println!("first run: starting `{ID}` fresh");
            AgentServer::start(Kettle::new().with_id(ID), Options::default()).await?
        }
        Err(other) => return Err(other.into()),
    };
    let mut events = kettle.subscribe();

    if kettle.state().await?.litres == 0.0 {
        let outcome = kettle
            .call(Signal::new("kettle.fill", json!({ "litres": 1.2 })))
            .await?;
        println!("> kettle.fill 1.2 l: status {:?}", outcome.snapshot.status);
    }

    // A failing action changes nothing; the error comes back with the call's outcome.
    let outcome = kettle
        .call(Signal::new("kettle.fill", json!({ "litres": 5.0 })))
        .await?;
    for error in outcome.errors() {
        println!("> kettle.fill 5 l: {error}");
    }
    println!(
        "  still {:.1} litres in the kettle",
        kettle.state().await?.litres
    );

    kettle.cast(Signal::new("kettle.heat", json!({})))?;
    println!("> kettle.heat (cast): the kettle schedules `kettle.boiled` in 1 s");
    let ready = tokio::time::timeout(Duration::from_secs(5), events.recv()).await??;
    println!("  the timer fired: `{}` {}", ready.signal_type, ready.data);

    kettle.call(Signal::new("kettle.remind", json!({}))).await?;
    let report = kettle.hibernate(&store).await?;
    println!(
        "hibernated `{ID}` after {} signal(s): {} pending timer(s) kept in the checkpoint",
        report.processed,
        report.pending_timers.len()
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs() as i64;
    for timer in &report.pending_timers {
        let minutes = (timer.due_at.timestamp() - now) / 60;
        println!(
            "  `{}` due in {} d {} h {} min (armed on the first run)",
            timer.signal.signal_type,
            minutes / 1440,
            minutes / 60 % 24,
            minutes % 60
        );
    }
    println!("run the example again to resume it");
    Ok(())
}
