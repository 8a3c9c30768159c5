//! What the end-to-end benches read about their own process: CPU time, resident memory, and
//! CPU placement. Linux only (`/proc`).

use std::time::Duration;

/// CPU time (user and system) of every live thread of this process, with nanosecond
/// precision (from `/proc/self/task/*/schedstat`). Threads that already exited are not
/// counted, so take both readings while the same threads live.
pub fn cpu_time() -> Duration {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return Duration::ZERO };
    let nanos: u64 = tasks
        .filter_map(|task| {
            let stat = std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok()?;
            stat.split_whitespace().next()?.parse::<u64>().ok()
        })
        .sum();
    Duration::from_nanos(nanos)
}

/// Resident set size of this process now, in bytes.
pub fn rss() -> u64 {
    status_kib("VmRSS:") * 1024
}

/// Peak resident set size of this process so far, in bytes.
pub fn peak_rss() -> u64 {
    status_kib("VmHWM:") * 1024
}

fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Pins the calling thread to `cpu`. Threads and processes it starts afterwards inherit the
/// placement, so call it first thing in `main`.
pub fn pin_to_cpu(cpu: usize) -> std::io::Result<()> {
    let mut set = rustix::thread::CpuSet::new();
    set.set(cpu);
    rustix::thread::sched_setaffinity(None, &set).map_err(std::io::Error::from)
}

/// Lets the calling thread run on every CPU again (undoes [`pin_to_cpu`]).
pub fn unpin() -> std::io::Result<()> {
    let mut set = rustix::thread::CpuSet::new();
    for cpu in 0..rustix::thread::CpuSet::MAX_CPU {
        set.set(cpu);
    }
    rustix::thread::sched_setaffinity(None, &set).map_err(std::io::Error::from)
}
