//! `mcp-adversary`: MCP peers that misbehave on purpose, one behaviour per mode.
//!
//! - `mcp-adversary stdio <mode>`: a stdio server (see [`stdio::MODES`]).
//! - `mcp-adversary http <mode>`: a raw HTTP/1.1 server on 127.0.0.1 that prints
//!   `listening on http://127.0.0.1:PORT/mcp` on stdout, then serves until killed (see
//!   [`http::MODES`]).
//! - Either with a `skills_*` mode: a hostile skills server (see [`skills::MODES`]).
//!
//! The `probe_*` modes (see `probe.rs`) answer the dual-era `server/discover` probe badly.
//!
//! Every mode answers the handshake correctly unless its point is not to, so that the test can
//! show which requests are hurt and which are not.

mod http;
mod oauth;
mod probe;
mod skills;
mod stdio;
mod tasks;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (transport, mode) = match args.as_slice() {
        [transport, mode, ..] => (transport.as_str(), mode.as_str()),
        _ => usage(),
    };
    let code = match transport {
        "stdio" => stdio::run(mode),
        "http" => http::run(mode),
        _ => usage(),
    };
    std::process::exit(code);
}

fn usage() -> ! {
    eprintln!("usage: mcp-adversary stdio <mode> | http <mode>");
    eprintln!("stdio modes: {}, {}", stdio::MODES.join(", "), probe::STDIO_MODES.join(", "));
    eprintln!("http modes: {}, {}", http::MODES.join(", "), probe::HTTP_MODES.join(", "));
    eprintln!("task modes (stdio and http): {}", tasks::MODES.join(", "));
    eprintln!("skills modes (stdio and http): {}", skills::MODES.join(", "));
    std::process::exit(2);
}
