//! Real servers for the cluster tests: `nats-server -js` and a throwaway PostgreSQL cluster,
//! started from the test itself on loopback ports in temporary directories.
//!
//! Nothing is installed at run time: a missing binary fails with the Debian package to
//! install (`.ci/run` installs both). PostgreSQL refuses to run as root, so under root the
//! cluster is created and run as the `postgres` user (or `nobody`) through `runuser`, in a
//! temporary directory handed to that user.

#![allow(dead_code, unreachable_pub)]

use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A free loopback port (bound, then released for the server to take).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("cannot bind a loopback port")
}

fn wait_for_port(port: u16, what: &str, log: &Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            panic!(
                "{what} did not accept connections on 127.0.0.1:{port} within 30 s; its log:\n{}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn find_binary(name: &str, dirs: &[PathBuf], package: &str) -> PathBuf {
    let from_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    dirs.iter()
        .chain(from_path.iter())
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "`{name}` is not installed; the cluster tests need the Debian package `{package}` (apt-get install {package}), which `.ci/run` installs"
            )
        })
}

/// A `nats-server -js` on a loopback port, killed on drop.
pub struct Nats {
    child: Child,
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl Nats {
    pub fn start() -> Nats {
        let binary = find_binary("nats-server", &[], "nats-server");
        let dir = tempfile::tempdir().expect("temp dir");
        let port = free_port();
        let log = dir.path().join("nats.log");
        let child = Command::new(binary)
            .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-sd"])
            .arg(dir.path().join("jetstream"))
            .arg("-l")
            .arg(&log)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("cannot start nats-server");
        wait_for_port(port, "nats-server", &log);
        Nats {
            child,
            port,
            _dir: dir,
        }
    }

    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A throwaway PostgreSQL cluster (trust authentication, loopback only), stopped on drop.
pub struct Postgres {
    bin: PathBuf,
    data: PathBuf,
    user: Option<&'static str>,
    pub port: u16,
    dir: tempfile::TempDir,
}

impl Postgres {
    /// Starts a cluster; `durable` keeps `fsync` on (benchmarks), tests turn it off for speed.
    pub fn start(durable: bool) -> Postgres {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .map(|entries| entries.flatten().map(|e| e.path().join("bin")).collect())
            .unwrap_or_default();
        dirs.sort();
        dirs.reverse();
        let initdb = find_binary("initdb", &dirs, "postgresql");
        let bin = initdb.parent().unwrap().to_path_buf();
        let dir = tempfile::tempdir().expect("temp dir");
        let root = std::fs::metadata("/proc/self")
            .map(|m| m.uid() == 0)
            .unwrap_or(false);
        let user = root.then(|| {
            if Command::new("id")
                .arg("postgres")
                .output()
                .is_ok_and(|o| o.status.success())
            {
                "postgres"
            } else {
                "nobody"
            }
        });
        if let Some(user) = user {
            let ok = Command::new("chown")
                .args(["-R", user])
                .arg(dir.path())
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "cannot hand {} to `{user}`", dir.path().display());
        }
        let data = dir.path().join("data");
        let pg = Postgres {
            bin,
            data,
            user,
            port: free_port(),
            dir,
        };
        pg.run("initdb", |c| {
            c.arg("-D").arg(&pg.data).args([
                "-U",
                "stratagem",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ]);
        });
        let mut conf = format!(
            "port = {}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{}'\nmax_connections = 200\n",
            pg.port,
            pg.dir.path().display()
        );
        if !durable {
            conf.push_str("fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n");
        }
        let auto = pg.data.join("postgresql.auto.conf");
        let mut existing = std::fs::read_to_string(&auto).unwrap_or_default();
        existing.push_str(&conf);
        std::fs::write(&auto, existing).expect("write postgresql.auto.conf");
        pg.ctl("start");
        pg
    }

    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        match self.user {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(path);
                c
            }
            None => Command::new(path),
        }
    }

    fn run(&self, program: &str, args: impl FnOnce(&mut Command)) {
        let mut command = self.command(program);
        args(&mut command);
        let out = command
            .output()
            .unwrap_or_else(|e| panic!("cannot run `{program}`: {e}"));
        assert!(
            out.status.success(),
            "`{program}` failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn ctl(&self, action: &str) {
        let log = self.dir.path().join("postgres.log");
        self.run("pg_ctl", |c| {
            c.arg("-D")
                .arg(&self.data)
                .arg("-l")
                .arg(&log)
                .args(["-w", "-m", "fast", action]);
        });
        if action != "stop" {
            wait_for_port(self.port, "postgres", &log);
        }
    }

    pub fn stop(&self) {
        self.ctl("stop");
    }

    pub fn start_again(&self) {
        self.ctl("start");
    }

    pub fn url(&self) -> String {
        format!("postgres://stratagem@127.0.0.1:{}/postgres", self.port)
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = self
            .command("pg_ctl")
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "immediate", "stop"])
            .output();
    }
}

#[cfg(feature = "nats")]
pub mod cluster;
pub mod desk;
pub mod tally;
