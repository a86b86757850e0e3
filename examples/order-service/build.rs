//! Compiles `agents/*.agent` into `$OUT_DIR/<stem>.rs` (`order.rs`, `patrol.rs`, `helpdesk.rs`, `reasoning.rs`).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    agent_dsl::Builder::new().compile(&[
        "agents/order.agent",
        "agents/patrol.agent",
        "agents/helpdesk.agent",
        "agents/reasoning.agent",
    ])?;
    Ok(())
}
