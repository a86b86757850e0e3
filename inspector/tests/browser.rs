//! The inspector in a real browser: headless Chromium, driven over WebDriver (`chromedriver`),
//! opens the page of the café in `examples/inspect`, and the test waits until the FSM view
//! shows a transition, the tree view a running node and nodes coloured by their last status
//! (a failure and a success), and the conversation a tool observation.
//! Screenshots of each view go to `target/inspector/`.
//!
//! Needs the Debian packages `chromium` and `chromium-driver` (`.ci/run` installs them);
//! `CHROMEDRIVER` names another driver binary.

#[allow(dead_code)]
#[path = "../../examples/inspect/agents.rs"]
mod agents;

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;
use stratagem::Signal;
use stratagem::inspector::Inspector;
use stratagem::strategy::RESTART_SIGNAL;

/// How long the page may take to show what a step changed.
const PATIENCE: Duration = Duration::from_secs(30);

/// A `chromedriver` child process, killed on drop.
struct Driver {
    child: Child,
    url: String,
}

impl Driver {
    fn start() -> Driver {
        let binary = std::env::var("CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".into());
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = Command::new(&binary)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|error| {
                panic!(
                    "cannot start `{binary}` ({error}): install the Debian packages `chromium` \
                     and `chromium-driver` (.ci/run does), or set CHROMEDRIVER"
                )
            });
        Driver {
            child,
            url: format!("http://127.0.0.1:{port}"),
        }
    }

    async fn connect(&self) -> Client {
        let mut capabilities = fantoccini::wd::Capabilities::new();
        capabilities.insert(
            "goog:chromeOptions".into(),
            json!({ "args": [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,900",
            ]}),
        );
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        // The driver takes a moment to listen.
        let mut last = None;
        for _ in 0..100 {
            match ClientBuilder::new(connector.clone())
                .capabilities(capabilities.clone())
                .connect(&self.url)
                .await
            {
                Ok(client) => return client,
                Err(error) => last = Some(error),
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("chromedriver did not start a browser: {last:?}");
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn wait_for(client: &Client, css: &str) {
    if let Err(error) = client
        .wait()
        .at_most(PATIENCE)
        .for_element(Locator::Css(css))
        .await
    {
        let shot = client.screenshot().await.unwrap_or_default();
        let path = save("failure.png", &shot);
        panic!("the page never showed `{css}`: {error} (screenshot: {path:?})");
    }
}

/// Clicks the element `css` names, finding it again if the page re-rendered it between the
/// find and the click (the agent list is redrawn as statuses change).
async fn click(client: &Client, css: &str) {
    let mut last = None;
    for _ in 0..20 {
        match client.find(Locator::Css(css)).await {
            Ok(element) => match element.click().await {
                Ok(()) => return,
                Err(error) => last = Some(error),
            },
            Err(error) => last = Some(error),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("could not click `{css}`: {last:?}");
}

fn save(name: &str, png: &[u8]) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    let dir = target.join("inspector");
    std::fs::create_dir_all(&dir).expect("target/inspector can be created");
    let path = dir.join(name);
    std::fs::write(&path, png).expect("the screenshot can be written");
    path
}

async fn screenshot(client: &Client, name: &str) {
    let png = client.screenshot().await.expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    save(name, &png);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_shows_transitions_running_nodes_and_reasoning_live() {
    let driver = Driver::start();
    let cafe = agents::Cafe::open(Duration::from_millis(300))
        .await
        .unwrap();
    let inspector = Inspector::new()
        .agent(&cafe.barista)
        .agent(&cafe.rover)
        .agent(&cafe.helpdesk)
        .serve("127.0.0.1:0")
        .await
        .unwrap();
    let client = driver.connect().await;
    client.goto(&inspector.url()).await.unwrap();

    // The barista is selected first; the page is live once the stream is open.
    wait_for(&client, ".machine .state.current[data-state='Idle']").await;
    wait_for(&client, ".connection[data-state='live']").await;
    cafe.barista
        .cast(Signal::new("cafe.order", json!({ "name": "tea" })))
        .unwrap();
    wait_for(&client, ".machine .state.current[data-state='Brewing']").await;
    wait_for(
        &client,
        ".machine .edge.last[data-from='Idle'][data-to='Brewing']",
    )
    .await;
    wait_for(&client, "#log .entry.in[data-type='cafe.order']").await;
    // The timer moves it on by itself.
    wait_for(
        &client,
        ".machine .edge.last[data-from='Brewing'][data-to='Ready']",
    )
    .await;
    wait_for(&client, "#log .entry.out[data-type='cafe.ready']").await;
    screenshot(&client, "fsm.png").await;

    // The tree, ticking on its own.
    click(&client, "li.agent[data-index='1']").await;
    wait_for(&client, "#view[data-kind='tree']").await;
    // Its rounds end (about 2s each): start another whenever one is over, until the page
    // shows the root running.
    let root_running = Locator::Css(".tree .node.running[data-node='0']");
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while client.find(root_running).await.is_err() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the tree view never showed a running root"
        );
        if cafe.rover.snapshot().await.unwrap().done() {
            cafe.rover
                .cast(Signal::new(RESTART_SIGNAL, json!({})))
                .unwrap();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    wait_for(&client, ".tree .node.running text").await;
    // Each node coloured by its last status: the battery check fails when the battery runs
    // low (once a round), while other nodes succeeded.
    let coloured = [
        Locator::Css(".tree .node.failure[data-status='failure']"),
        Locator::Css(".tree .node.success[data-status='success']"),
    ];
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let failure = client.find(coloured[0]).await.is_ok();
        if failure && client.find(coloured[1]).await.is_ok() {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the tree view never showed a failed node beside a successful one"
        );
        if cafe.rover.snapshot().await.unwrap().done() {
            cafe.rover
                .cast(Signal::new(RESTART_SIGNAL, json!({})))
                .unwrap();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    screenshot(&client, "tree.png").await;

    // The helpdesk reasons, calls tools and answers.
    click(&client, "li.agent[data-index='2']").await;
    wait_for(&client, "#view[data-kind='conversation']").await;
    cafe.helpdesk
        .cast(Signal::new(
            "ai.query",
            json!({ "query": agents::QUESTION, "request_id": "browser" }),
        ))
        .unwrap();
    wait_for(&client, ".conversation .message.act .tool-call").await;
    wait_for(&client, ".conversation .message.observe").await;
    screenshot(&client, "conversation.png").await;

    client.close().await.unwrap();
    inspector.shutdown().await;
}
