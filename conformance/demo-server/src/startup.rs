//! Process-level behaviours switched on by flags: the banner, the stderr flood and the
//! grandchild process.

use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::thread;

use super::lifecycle::{SERVER_NAME, SUPPORTED_VERSIONS};
use super::modern::MODERN_VERSIONS;
use super::options::Options;

/// Prints a few startup lines to stderr (`endpoint`: the HTTP endpoint URL, `None` for stdio).
pub(crate) fn print_banner(options: &Options, endpoint: Option<&str>) {
    let transport = endpoint.unwrap_or("stdio");
    eprintln!("demo-server: {SERVER_NAME} {} ready on {transport}", env!("CARGO_PKG_VERSION"));
    eprintln!(
        "demo-server: protocol versions {} (initialize), {} (per-request _meta)",
        SUPPORTED_VERSIONS.join(", "),
        MODERN_VERSIONS.join(", ")
    );
    let pages = match options.page_size {
        0 => "one page per list".to_owned(),
        size => format!("page size {size}"),
    };
    match endpoint {
        None => eprintln!("demo-server: {pages}; send JSON-RPC lines on stdin, EOF exits"),
        Some(url) => eprintln!("demo-server: {pages}; POST JSON-RPC to {url}, kill to stop"),
    }
}

/// Starts a background thread that writes ~1 KiB lines to stderr in a tight loop, forever
/// (until stderr fails, e.g. when the reading end is closed).
pub(crate) fn flood_stderr() {
    let flood = || {
        let mut line = b"demo-server: flood ".to_vec();
        line.resize(1023, b'~');
        line.push(b'\n');
        while std::io::stderr().write_all(&line).is_ok() {}
    };
    if let Err(error) = thread::Builder::new().name("stderr flood".into()).spawn(flood) {
        eprintln!("demo-server: cannot start the stderr flood: {error}");
    }
}

/// Spawns `sleep 3600` as a child of the server, left in the server's process group (so a client
/// that kills the group kills it too, and one that only kills the server leaves it behind), and
/// prints `demo-server: grandchild pid <pid>` to stderr.
///
/// Its stdio is detached (`/dev/null`) so it never holds the client's pipes open.
pub(crate) fn spawn_grandchild() -> Option<Child> {
    let spawned = Command::new("sleep")
        .arg("3600")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    match spawned {
        Ok(child) => {
            eprintln!("demo-server: grandchild pid {}", child.id());
            Some(child)
        }
        Err(error) => {
            eprintln!("demo-server: cannot spawn the grandchild `sleep 3600`: {error}");
            None
        }
    }
}
