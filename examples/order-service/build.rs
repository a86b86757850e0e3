//! Compiles `agents/*.agent` into `$OUT_DIR/<stem>.rs`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    agent_dsl::Builder::new().compile(&["agents/order.agent"])?;
    Ok(())
}
