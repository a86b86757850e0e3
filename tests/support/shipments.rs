//! A shipment that waits for two people at once: the behaviour-tree agent the interrupt tests
//! drive (in process, and across a `kill -9`).

use stratagem::prelude::*;

/// Packs a shipment, waits for two people (a manager and customs) at once, then ships it.
#[agent(strategy = BehaviorTree, tick = 10ms, tree = {
    sequence {
        action pack
        parallel(success = 2) {
            ask approval(Manifest) -> Verdict do record_approval
            ask customs(Manifest) -> Verdict do record_customs
        }
        action ship
    }
})]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Shipment {
    /// Crates packed.
    pub crates: u32,
    /// How often `pack` ran.
    pub packs_run: u32,
    /// How often `ship` ran.
    pub ships_run: u32,
    /// `(who, note)` for every approval taken.
    pub approvals: Vec<(String, String)>,
}

/// What the people are shown.
#[derive(Debug, Serialize)]
pub struct Manifest {
    /// Crates packed.
    pub crates: u32,
}

impl From<&Shipment> for Manifest {
    fn from(shipment: &Shipment) -> Self {
        Manifest {
            crates: shipment.crates,
        }
    }
}

/// A person's answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Verdict {
    /// Whether the person approves.
    pub approve: bool,
    /// Why.
    pub note: String,
}

/// Packs three crates.
#[action]
pub fn pack(shipment: &mut Shipment) {
    shipment.crates += 3;
    shipment.packs_run += 1;
}

/// Ships the crates.
#[action]
pub fn ship(shipment: &mut Shipment) {
    shipment.ships_run += 1;
}

fn record(shipment: &mut Shipment, who: &str, verdict: Verdict) -> bt::Status {
    if !verdict.approve {
        return bt::Status::Failure;
    }
    shipment.approvals.push((who.to_string(), verdict.note));
    bt::Status::Success
}

/// The manager's answer: a refusal fails the leaf.
#[action]
pub fn record_approval(shipment: &mut Shipment, verdict: Verdict) -> bt::Status {
    record(shipment, "manager", verdict)
}

/// Customs' answer: a refusal fails the leaf.
#[action]
pub fn record_customs(shipment: &mut Shipment, verdict: Verdict) -> bt::Status {
    record(shipment, "customs", verdict)
}
