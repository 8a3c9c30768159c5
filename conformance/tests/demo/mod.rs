//! The demo server as the tests of this crate start it: the `demo_peer` example (and its
//! siblings) next to the test binary, and a Streamable HTTP instance killed by PID when dropped.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::SystemTime;

/// An example binary of this crate, next to the test binaries. `cargo test` builds the examples,
/// but a filtered run (`cargo test --test cli`, nextest) does not, and could run one left from an
/// older build: when the binary is older than any source it is built from, this crate's examples
/// are built first (once per test process).
pub(crate) fn example(name: &str) -> PathBuf {
    static BUILT: LazyLock<Result<(), String>> =
        LazyLock::new(|| cargo_build(&["-p", "mcp-conformance", "--examples"]));
    let path = profile_dir().join("examples").join(name);
    if is_stale(&path)
        && let Err(error) = &*BUILT
    {
        panic!("{error}");
    }
    assert!(path.exists(), "{} is missing after building this crate's examples", path.display());
    path
}

/// `target/<profile>`: where cargo put this test binary (`target/<profile>/deps/…`).
pub(crate) fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>/deps/<test>").to_path_buf()
}

/// Whether `binary` is missing, or older than a source, manifest or the lock file of the
/// workspace's crates it may link (fuzz, target, test and bench directories are not looked at).
pub(crate) fn is_stale(binary: &Path) -> bool {
    let Ok(built) = binary.metadata().and_then(|m| m.modified()) else { return true };
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut newest = SystemTime::UNIX_EPOCH;
    let mut visit = vec![workspace.join("Cargo.lock"), workspace.join("Cargo.toml")];
    for dir in ["core", "runtimes", "conformance/src", "conformance/examples", "conformance/demo-server"] {
        visit.push(workspace.join(dir));
    }
    while let Some(path) = visit.pop() {
        let Ok(meta) = path.metadata() else { continue };
        if meta.is_dir() {
            let skip = path.file_name().is_some_and(|n| n == "target" || n == "tests" || n == "benches");
            if !skip && let Ok(entries) = std::fs::read_dir(&path) {
                visit.extend(entries.flatten().map(|e| e.path()));
            }
        } else if path.extension().is_some_and(|e| e == "rs" || e == "toml" || e == "lock")
            && let Ok(modified) = meta.modified()
        {
            newest = newest.max(modified);
        }
    }
    newest > built
}

/// `cargo build --quiet <args>` with the cargo that runs the tests, into this test binary's
/// target directory and profile (and target triple, if any), so that the build is the one the
/// test run made, not a new one. `Err` holds cargo's output.
pub(crate) fn cargo_build(args: &[&str]) -> Result<(), String> {
    let profile_dir = profile_dir();
    let parent = profile_dir.parent().expect("a target directory");
    // `target/debug` in the target directory; `target/<triple>/debug` with `--target`, where the
    // target directory (the one with cargo's CACHEDIR.TAG) is one level up.
    let (target_dir, triple) = if parent.join("CACHEDIR.TAG").exists() {
        (parent, None)
    } else {
        let triple = parent.file_name().and_then(|t| t.to_str()).expect("a target triple");
        (parent.parent().expect("a target directory"), Some(triple))
    };
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command.args(["build", "--quiet"]).args(args).arg("--manifest-path").arg(workspace.join("Cargo.toml"));
    command.arg("--target-dir").arg(target_dir);
    match profile_dir.file_name().and_then(|p| p.to_str()) {
        Some("debug") => {}
        Some(profile) => {
            command.args(["--profile", profile]);
        }
        None => panic!("no profile in {}", profile_dir.display()),
    }
    if let Some(triple) = triple {
        command.args(["--target", triple]);
    }
    let output = command.stdin(Stdio::null()).output().map_err(|e| format!("cannot run {command:?}: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!("{command:?} failed ({}):\n{}", output.status, String::from_utf8_lossy(&output.stderr)))
    }
}

/// Everything `child` writes to its (piped) stderr, collected by a thread as it comes.
pub(crate) fn collect_stderr(child: &mut Child) -> Arc<Mutex<String>> {
    let stderr = Arc::new(Mutex::new(String::new()));
    let mut pipe = child.stderr.take().expect("piped stderr");
    let sink = Arc::clone(&stderr);
    std::thread::spawn(move || {
        let mut buffer = [0_u8; 4096];
        while let Ok(n @ 1..) = pipe.read(&mut buffer) {
            sink.lock().unwrap_or_else(|e| e.into_inner()).push_str(&String::from_utf8_lossy(&buffer[..n]));
        }
    });
    stderr
}

/// A scratch directory under the system's temporary one, removed when dropped.
pub(crate) struct Scratch(PathBuf);

impl Scratch {
    /// A fresh, empty directory named for `name` and this process.
    pub(crate) fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("mcp-conformance-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        Self(dir)
    }

    /// The path of `file` in it.
    pub(crate) fn path(&self, file: &str) -> String {
        self.0.join(file).to_string_lossy().into_owned()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The demo server binary (the `demo_peer` example).
pub(crate) fn demo_path() -> PathBuf {
    example("demo_peer")
}

/// `mcp-demo-server --http 127.0.0.1:0` as a child process, killed (by PID) when dropped. Its
/// stderr is kept: it names the sessions the server opens.
pub(crate) struct DemoHttp {
    child: Child,
    /// The endpoint URL the server printed.
    pub(crate) url: String,
    stderr: Arc<Mutex<String>>,
}

impl DemoHttp {
    pub(crate) fn start() -> Self {
        Self::start_with(&[])
    }

    /// The demo server over HTTP with more flags (`--skills`, ...).
    pub(crate) fn start_with(args: &[&str]) -> Self {
        let mut child = Command::new(demo_path())
            .args(["--http", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the demo server");
        let mut url = String::new();
        let stdout = child.stdout.take().expect("piped stdout");
        BufReader::new(stdout).read_line(&mut url).expect("the demo server prints its URL");
        let stderr = collect_stderr(&mut child);
        Self { child, url: url.trim().to_owned(), stderr }
    }

    /// Whether the server process has exited (it is reaped if so).
    pub(crate) fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// What the server wrote to stderr so far.
    pub(crate) fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for DemoHttp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
