//! The live inspector: a barista (FSM), a patrol robot (behaviour tree) and a helpdesk (ReAct,
//! on a scripted model) run in one agent server; open the printed address to watch them.
//!
//! ```text
//! cargo run --example inspect                  # http://127.0.0.1:7878/
//! cargo run --example inspect -- 127.0.0.1:9000
//! ```
//!
//! In your own crate: `stratagem = { version = "..", features = ["inspector"] }`.

mod agents;

use std::time::Duration;

use stratagem::inspector::Inspector;

#[tokio::main]
async fn main() {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| Inspector::DEFAULT_ADDR.to_string());
    let cafe = match agents::Cafe::open(Duration::from_millis(800)).await {
        Ok(cafe) => cafe,
        Err(error) => {
            eprintln!("the café could not open: {error}");
            std::process::exit(1);
        }
    };
    let inspector = Inspector::new()
        .agent(&cafe.barista)
        .agent(&cafe.rover)
        .agent(&cafe.helpdesk)
        .serve(addr.as_str())
        .await;
    let inspector = match inspector {
        Ok(inspector) => inspector,
        Err(error) => {
            eprintln!("the inspector could not start: {error}");
            std::process::exit(1);
        }
    };
    println!("inspecting the café at {}", inspector.url());
    println!("(Ctrl-C to stop)");
    tokio::select! {
        () = cafe.drive() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    inspector.shutdown().await;
}
