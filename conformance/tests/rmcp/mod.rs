//! Our rmcp 3.11 peer (`conformance/peers/rmcp-server`), shared by the interop tests that run it.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// The peer's binary, which `.ci/install-peers` builds and `.ci/interop` names.
pub(crate) fn peer_binary() -> String {
    std::env::var("MCP_RMCP_SERVER").expect(
        "MCP_RMCP_SERVER must point at the rmcp peer's binary (.ci/install-peers builds it): run .ci/interop",
    )
}

/// The peer serving Streamable HTTP on a free port, killed (by PID) and reaped when dropped.
pub(crate) struct HttpPeer {
    child: Child,
    /// The endpoint URL the peer printed.
    pub(crate) url: String,
}

impl HttpPeer {
    /// Starts the peer with `--http 127.0.0.1:0` and `args`, and reads the URL it prints once
    /// it listens (`MCP_SERVER_URL=…`).
    pub(crate) fn start(args: &[&str]) -> Self {
        let mut child = Command::new(peer_binary())
            .args(["--http", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the rmcp peer");
        let stdout = child.stdout.take().expect("piped stdout");
        // Owned before the read, so that a peer that prints no URL is still killed.
        let mut peer = HttpPeer { child, url: String::new() };
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).expect("the peer's first line");
        peer.url = line
            .trim()
            .strip_prefix("MCP_SERVER_URL=")
            .unwrap_or_else(|| panic!("no URL: {line:?}"))
            .to_owned();
        peer
    }
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
