//! The demo server binary over HTTP, as these tests start it: `--http 127.0.0.1:0` and more
//! flags, the URL it prints read from stdout, the process killed by PID when dropped.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::Duration;

/// How long the server may take to print its URL, and to end its stdout once killed.
pub(crate) const URL_TIMEOUT: Duration = Duration::from_secs(10);

/// A running `mcp-demo-server <args>` (the args include `--http ADDR`), killed and reaped when
/// dropped.
pub(crate) struct HttpServer {
    child: Child,
    /// `host:port`, from the URL it printed.
    pub(crate) address: String,
    /// Everything it writes on stdout after the URL, sent once stdout ends.
    rest: Receiver<String>,
}

impl HttpServer {
    /// Starts the server and waits for the one line it prints: `http://HOST:PORT/mcp`.
    pub(crate) fn spawn(args: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-demo-server"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn mcp-demo-server {}: {e}", args.join(" ")));
        let stdout = child.stdout.take().expect("piped stdout");
        let (sender, lines) = mpsc::channel();
        thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut first = String::new();
            let _ = reader.read_line(&mut first);
            let _ = sender.send(first);
            let mut rest = String::new();
            let _ = reader.read_to_string(&mut rest);
            let _ = sender.send(rest);
        });
        let Ok(line) = lines.recv_timeout(URL_TIMEOUT) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`mcp-demo-server {}` printed no URL within {URL_TIMEOUT:?}", args.join(" "));
        };
        let address = line
            .trim_end()
            .strip_prefix("http://")
            .and_then(|rest| rest.strip_suffix("/mcp"))
            .unwrap_or_else(|| panic!("the first line is not http://HOST:PORT/mcp: {line:?}"))
            .to_owned();
        Self { child, address, rest: lines }
    }

    /// The endpoint URL it printed.
    pub(crate) fn url(&self) -> String {
        format!("http://{}/mcp", self.address)
    }

    /// Kills the server and returns what it wrote on stdout after the URL.
    pub(crate) fn kill_and_read_the_rest(&mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.rest.recv_timeout(URL_TIMEOUT).expect("stdout ends when the server is killed")
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
