//! Command-line options of `mcp-demo-server`, parsed by hand (no dependencies).

/// The usage text printed by `--help`.
pub const USAGE: &str = "\
mcp-demo-server: a deterministic MCP demo server over stdio (newline-delimited JSON-RPC 2.0)
or Streamable HTTP

USAGE:
    mcp-demo-server [OPTIONS]

OPTIONS:
    --http ADDR          serve Streamable HTTP on ADDR (e.g. 127.0.0.1:0) instead of stdio: prints the
                         endpoint URL (http://HOST:PORT/mcp) as one line on stdout, serves until killed
    --legacy-only        behave as a server of the initialize era only: server/discover is -32601 and
                         2026-07-28 `_meta` is ignored (for testing dual-era clients' fallback)
    --page-size N        list results hold at most N items and a nextCursor (0 = one page; default 0)
    --flood-stderr       a background thread writes ~1 KiB lines to stderr forever
    --spawn-grandchild   spawn `sleep 3600` in the server's process group and print its pid to stderr
    --banner             print a few startup lines to stderr
    --exit-on-eof        exit 0 when stdin reaches EOF (always on; accepted for compatibility)
    -h, --help           print this help and exit

Over stdio, protocol messages go to stdout, logs to stderr, and the server exits 0 at stdin EOF.
";

/// How the demo server behaves; see [`USAGE`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// Maximum number of items per list page; `0` means everything in one page.
    pub page_size: usize,
    /// Write ~1 KiB lines to stderr in a tight loop from a background thread.
    pub flood_stderr: bool,
    /// Spawn a grandchild `sleep 3600` at startup (in the same process group).
    pub spawn_grandchild: bool,
    /// Print startup lines to stderr.
    pub banner: bool,
    /// Serve Streamable HTTP on this address (`host:port`) instead of stdio.
    pub http: Option<String>,
    /// Speak only the `initialize` era, as servers written before 2026-07-28 do.
    pub legacy_only: bool,
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Run the server with these options.
    Run(Options),
    /// Print [`USAGE`] and exit successfully.
    Help,
}

impl Options {
    /// Parses the arguments that follow the program name.
    ///
    /// Accepts `--page-size N`, `--page-size=N`, `--http ADDR` and `--http=ADDR`. Returns a
    /// message describing the first problem on error.
    pub fn parse<I>(args: I) -> Result<Command, String>
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        let mut options = Options::default();
        let mut args = args.into_iter().map(Into::into);
        while let Some(arg) = args.next() {
            let (flag, inline_value) = match arg.split_once('=') {
                Some((flag, value)) if flag.starts_with("--") => (flag.to_owned(), Some(value.to_owned())),
                _ => (arg.clone(), None),
            };
            let takes_value = flag == "--page-size" || flag == "--http";
            if inline_value.is_some() && !takes_value {
                return Err(format!("option {flag} takes no value"));
            }
            match flag.as_str() {
                "-h" | "--help" => return Ok(Command::Help),
                "--page-size" => {
                    let value = inline_value
                        .or_else(|| args.next())
                        .ok_or_else(|| "--page-size needs a value".to_owned())?;
                    options.page_size = value
                        .parse()
                        .map_err(|_| format!("--page-size expects a non-negative integer, got {value:?}"))?;
                }
                "--http" => {
                    let value = inline_value
                        .or_else(|| args.next())
                        .filter(|value| !value.is_empty())
                        .ok_or_else(|| "--http needs an address such as 127.0.0.1:0".to_owned())?;
                    options.http = Some(value);
                }
                "--flood-stderr" => options.flood_stderr = true,
                "--spawn-grandchild" => options.spawn_grandchild = true,
                "--banner" => options.banner = true,
                "--legacy-only" => options.legacy_only = true,
                "--exit-on-eof" => {}
                _ => return Err(format!("unknown argument {arg:?}")),
            }
        }
        Ok(Command::Run(options))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_flags() {
        let parsed = Options::parse(["--page-size", "3", "--flood-stderr", "--banner"]);
        assert_eq!(
            parsed,
            Ok(Command::Run(Options {
                page_size: 3,
                flood_stderr: true,
                spawn_grandchild: false,
                banner: true,
                http: None,
                legacy_only: false,
            }))
        );
        let parsed = Options::parse(["--page-size=7", "--spawn-grandchild", "--exit-on-eof"]);
        assert_eq!(
            parsed,
            Ok(Command::Run(Options { page_size: 7, spawn_grandchild: true, ..Options::default() }))
        );
        assert_eq!(Options::parse(Vec::<String>::new()), Ok(Command::Run(Options::default())));
        assert_eq!(Options::parse(["--help"]), Ok(Command::Help));
        let parsed = Options::parse(["--http", "127.0.0.1:0", "--page-size=2"]);
        assert_eq!(
            parsed,
            Ok(Command::Run(Options {
                http: Some("127.0.0.1:0".into()),
                page_size: 2,
                ..Options::default()
            }))
        );
        let parsed = Options::parse(["--http=[::1]:8080"]);
        assert_eq!(
            parsed,
            Ok(Command::Run(Options { http: Some("[::1]:8080".into()), ..Options::default() }))
        );
    }

    #[test]
    fn rejects_bad_flags() {
        assert!(Options::parse(["--page-size"]).is_err());
        assert!(Options::parse(["--page-size", "-1"]).is_err());
        assert!(Options::parse(["--banner=yes"]).is_err());
        assert_eq!(
            Options::parse(["--legacy-only"]),
            Ok(Command::Run(Options { legacy_only: true, ..Options::default() }))
        );
        assert!(Options::parse(["--nope"]).is_err());
        assert!(Options::parse(["--http"]).is_err());
        assert!(Options::parse(["--http="]).is_err());
    }
}
