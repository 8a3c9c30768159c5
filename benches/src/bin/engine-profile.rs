//! The engine bench's `decode_correlate` work, a fixed number of times, for profilers: each
//! iteration feeds [`BATCH`] `tools/call` responses to a ready connection with as many requests
//! pending and drains every event (`engine`), or parses the same lines into the practical-limit
//! envelope (`envelope`). Only [`measured`] does the measured work, so that
//!
//! ```sh
//! valgrind --tool=callgrind --toggle-collect='engine_profile::measured' \
//!     target/release/engine-profile engine 200 100
//! ```
//!
//! counts the instructions of the work alone (the connections are made outside it); divide by
//! the responses it prints. Instruction counts do not move with a noisy machine, as times do.
//!
//! Usage: `engine-profile engine|envelope SIZE ITERATIONS`.

use std::hint::black_box;
use std::time::Instant;

use mcp_benches::engine_workload::{BATCH, Envelope, responses, with_pending};
use mcp_sansio::{ClientConnection, Event};

/// The measured work of one iteration; returns the responses decoded.
#[inline(never)]
fn measured(work: Work<'_>) -> usize {
    match work {
        Work::Engine(conn, now, bytes) => {
            conn.feed(now, black_box(bytes));
            let mut responses = 0;
            while let Some(event) = conn.poll_event() {
                if let Event::Response { result: Ok(raw), .. } = &event {
                    black_box(raw);
                    responses += 1;
                }
            }
            responses
        }
        Work::Envelope(lines) => {
            for line in lines {
                let envelope: Envelope<'_> = serde_json::from_slice(black_box(line)).expect("valid");
                black_box((envelope.jsonrpc, envelope.id, envelope.result));
            }
            lines.len()
        }
    }
}

enum Work<'a> {
    Engine(&'a mut ClientConnection, Instant, &'a [u8]),
    Envelope(&'a [&'a [u8]]),
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(mode), Some(size), Some(iterations)) = (
        args.first(),
        args.get(1).and_then(|s| s.parse::<usize>().ok()),
        args.get(2).and_then(|s| s.parse::<usize>().ok()),
    ) else {
        eprintln!("usage: engine-profile engine|envelope SIZE ITERATIONS");
        std::process::exit(2);
    };
    let bytes = responses(size);
    let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()).collect();
    let mut decoded = 0;
    let start = Instant::now();
    let mut spent = std::time::Duration::ZERO;
    for _ in 0..iterations {
        match mode.as_str() {
            "engine" => {
                let (mut conn, now) = with_pending();
                let t = Instant::now();
                decoded += measured(Work::Engine(&mut conn, now, &bytes));
                spent += t.elapsed();
            }
            "envelope" => {
                let t = Instant::now();
                decoded += measured(Work::Envelope(&lines));
                spent += t.elapsed();
            }
            other => panic!("unknown mode {other}"),
        }
    }
    assert_eq!(decoded, iterations * BATCH);
    let per = spent.as_nanos() as f64 / decoded as f64;
    println!("{mode} {size} B: {decoded} responses, {per:.0} ns each ({:?} in all)", start.elapsed());
}
