//! A media player as a statechart: `On` is a superstate whose rows apply wherever playback is,
//! with two parallel regions (the `Deck` plays, pauses and stops while `Sound` is muted or
//! not, independently), a sleep timer on `On` runs while the player moves inside it, and deep
//! history resumes both regions exactly where they were when the player was switched off.
//!
//! Run it with `cargo run --example media_player`. It runs on the agent server under tokio's
//! paused clock, so the 30-minute sleep timer takes no time at all.

use std::time::Duration;

use stratagem::Snapshot;
use stratagem::prelude::*;

/// A media player.
#[agent(
    strategy = Fsm,
    transitions {
        initial Off
        enter On do power_on
        exit On do power_off
        Off -> On on power
        Off -> Resume on resume
        parallel On {
            history deep Resume
            On -> Off on power
            On -> Off after 30m
            On on volume do set_volume
            state Deck {
                initial Stopped
                Stopped -> Playback on play do load_track
                state Playback {
                    initial Playing
                    Playback -> Stopped on stop
                    Playing -> Paused on pause
                    Paused -> Playing on play
                    Playing on next do skip_track
                }
            }
            state Sound {
                initial Audible
                Audible -> Muted on mute
                Muted -> Audible on mute
            }
        }
    },
    routes {
        "player.power" => power
        "player.resume" => resume
        "player.play" => play
        "player.pause" => pause
        "player.stop" => stop
        "player.next" => next
        "player.volume" => volume
        "player.mute" => mute
    }
)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Player {
    /// The track playing (or paused).
    pub track: u32,
    /// The volume, 0 to 10.
    pub volume: u8,
    /// Times the amplifier was switched on.
    pub power_cycles: u32,
}

/// A volume change, as the `player.volume` signal carries it.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Volume {
    /// The new volume, 0 to 10.
    pub level: u8,
}

/// Switches the amplifier on (entering `On`, from wherever it is entered).
#[action]
fn power_on(player: &mut Player) {
    player.power_cycles += 1;
}

/// Switches the amplifier off (leaving `On`, whichever row leaves it).
#[action]
fn power_off(player: &mut Player) -> Outcome {
    Outcome::new().emit(Signal::new(
        "player.off",
        json!({ "track": player.track, "volume": player.volume }),
    ))
}

/// Sets the volume: an internal row of `On`, so it works in every state inside `On` and
/// leaves and enters nothing.
#[action]
fn set_volume(player: &mut Player, volume: Volume) -> Result<(), ActionError> {
    if volume.level > 10 {
        return Err(ActionError::new("the volume goes from 0 to 10"));
    }
    player.volume = volume.level;
    Ok(())
}

/// Loads the first track.
#[action]
fn load_track(player: &mut Player) {
    player.track = 1;
}

/// Skips to the next track.
#[action]
fn skip_track(player: &mut Player) {
    player.track += 1;
}

fn show(label: &str, snapshot: &Snapshot) {
    println!("  {label:<34} active={}", snapshot.details["active"]);
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!(
        "The player (PlayerState::MERMAID):\n{}",
        PlayerState::MERMAID
    );

    let server = AgentServer::start(Player::new(), Options::default()).await?;
    let call = |kind: &'static str, data: serde_json::Value| {
        let server = &server;
        async move { server.call(Signal::new(kind, data)).await }
    };

    println!("1. The superstate's rows apply everywhere inside it");
    show("power", &call("player.power", json!({})).await?.snapshot);
    show("play", &call("player.play", json!({})).await?.snapshot);
    show("next", &call("player.next", json!({})).await?.snapshot);
    show(
        "volume 7 (a row of On)",
        &call("player.volume", json!({ "level": 7 })).await?.snapshot,
    );
    show("pause", &call("player.pause", json!({})).await?.snapshot);
    show(
        "mute (the Sound region only)",
        &call("player.mute", json!({})).await?.snapshot,
    );
    let outcome = call("player.power", json!({})).await?;
    show("power (On's row, from Paused)", &outcome.snapshot);

    println!("2. Deep history resumes both regions where they were");
    show("resume", &call("player.resume", json!({})).await?.snapshot);
    let state = server.state().await?;
    println!(
        "  track {}, volume {}, amplifier switched on {} times",
        state.track, state.volume, state.power_cycles
    );

    println!("3. The sleep timer of On runs while the player moves inside it");
    show("play", &call("player.play", json!({})).await?.snapshot);
    tokio::time::advance(Duration::from_secs(20 * 60)).await;
    show(
        "next, 20 minutes later",
        &call("player.next", json!({})).await?.snapshot,
    );
    tokio::time::advance(Duration::from_secs(11 * 60)).await;
    show("31 minutes after resume", &server.snapshot().await?);

    let report = server.stop().await;
    println!(
        "  timers fired: {}, errors: {}",
        report.timers_fired, report.errors
    );
    Ok(())
}
