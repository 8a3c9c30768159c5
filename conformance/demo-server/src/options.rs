//! Command-line options of `mcp-demo-server`, parsed by hand (no dependencies).

use std::time::Duration;

/// The usage text printed by `--help`.
pub const USAGE: &str = "\
mcp-demo-server: a deterministic MCP demo server over stdio (newline-delimited JSON-RPC 2.0)
or Streamable HTTP

USAGE:
    mcp-demo-server [OPTIONS]

OPTIONS:
    --http ADDR          serve Streamable HTTP on ADDR (e.g. 127.0.0.1:0) instead of stdio: prints the
                         endpoint URL (http://HOST:PORT/mcp) as one line on stdout, serves until killed
    --oauth              with --http: require OAuth 2.1 bearer tokens on /mcp and be the authorization
                         server too, on the same listener (issuer http://HOST:PORT): protected
                         resource metadata, authorization server metadata, /register (dynamic client
                         registration), /authorize (always approves, PKCE S256 required), /token
                         (authorization_code, refresh_token, client_credentials), /demo/oauth-stats.
                         Scopes mcp:tools (every request) and mcp:admin (the admin_echo tool)
    --oauth-client ID:SECRET
                         with --oauth: a pre-registered confidential client (repeatable); it may use
                         client_credentials, and authorization_code with any loopback redirect URI
    --oauth-token-ttl SECS
                         with --oauth: access token lifetime in seconds (default 3600; 0 = expired
                         at once). Refresh tokens do not expire
    --legacy-only        behave as a server of the initialize era only: server/discover is -32601 and
                         2026-07-28 `_meta` is ignored (for testing dual-era clients' fallback)
    --page-size N        list results hold at most N items and a nextCursor (0 = one page; default 0)
    --tasks              offer the tasks extension (io.modelcontextprotocol/tasks, SEP-2663) on 2026-07-28:
                         tools that run on their own thread answer with a task when a request declares
                         it (long_running, sleep, sample, elicit, list_roots, stderr_burst: long_running
                         {steps, step_ms} suits a resume demo); tasks/get, tasks/update, tasks/cancel;
                         the tools render (a task only, 2 s at most) and cancelled_tasks
    --task-bug BUG       with a planted bug (implies --tasks): reused-id (a task created after another
                         one ended takes its id, so a completed task shows working again)
    --skills             offer the skills extension (io.modelcontextprotocol/skills, SEP-2640): skills/list,
                         skills/get and the skills' files as skill:// resources
    --skill-bug BUG      with a planted bug (implies --skills): digest (a file's bytes do not match its
                         digest), size (nor its size), frontmatter (SKILL.md's frontmatter differs from
                         the entry's), name (a name that is not its path's last segment), unlisted (a
                         file the entry leaves out), limits (two skills past the spec's limits)
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
    /// Offer the tasks extension (`--tasks`, or any `--task-bug`).
    pub tasks: bool,
    /// A planted tasks bug (`--task-bug`).
    pub task_bug: Option<crate::TaskBug>,
    /// Offer the skills extension (`--skills`, or any `--skill-bug`).
    pub skills: bool,
    /// A planted skills bug (`--skill-bug`).
    pub skill_bug: Option<SkillBug>,
    /// OAuth mode of the HTTP server (`--oauth`): `/mcp` needs a bearer token, and the server
    /// is its own authorization server (see the crate docs, "OAuth"). Only HTTP uses it: stdio
    /// ignores it.
    pub oauth: Option<OAuthOptions>,
}

/// A deliberate mistake in the skills the demo serves (`--skill-bug`), for showing that clients
/// refuse what does not verify and that `mcp-conformance check` finds it. See the crate docs,
/// "Skills".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkillBug {
    /// `pdf-processing`'s `references/FORMS.md` is served with one byte changed (its size is right).
    Digest,
    /// `pdf-processing`'s `references/FORMS.md` is served with a line more than its size says.
    Size,
    /// `pdf-processing`'s `SKILL.md` says another `description` than its entry (its digest and
    /// size are those of what is served).
    Frontmatter,
    /// `acme/billing/refunds` is named `refund`, in its entry and in its `SKILL.md`.
    Name,
    /// `pdf-processing`'s entry leaves out `scripts/extract.py`, which is still served.
    Unlisted,
    /// Two more skills: `demo/too-many` lists 513 files, `demo/too-large` 16 MiB and a byte.
    Limits,
}

impl SkillBug {
    /// Every bug, in the order of `--help`.
    pub const ALL: [SkillBug; 6] = [
        SkillBug::Digest,
        SkillBug::Size,
        SkillBug::Frontmatter,
        SkillBug::Name,
        SkillBug::Unlisted,
        SkillBug::Limits,
    ];

    /// The name `--skill-bug` takes.
    pub fn name(self) -> &'static str {
        match self {
            SkillBug::Digest => "digest",
            SkillBug::Size => "size",
            SkillBug::Frontmatter => "frontmatter",
            SkillBug::Name => "name",
            SkillBug::Unlisted => "unlisted",
            SkillBug::Limits => "limits",
        }
    }
}

/// The settings of OAuth mode (`--oauth`, `--oauth-client`, `--oauth-token-ttl`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthOptions {
    /// Pre-registered confidential clients, as `(client_id, client_secret)`; a later entry for
    /// the same id replaces an earlier one.
    pub clients: Vec<(String, String)>,
    /// How long an access token is valid (`expires_in`); zero makes tokens expire at once.
    pub token_ttl: Duration,
}

impl Default for OAuthOptions {
    /// No pre-registered clients; tokens valid for an hour.
    fn default() -> Self {
        Self { clients: Vec::new(), token_ttl: DEFAULT_TOKEN_TTL }
    }
}

/// The access token lifetime unless `--oauth-token-ttl` says otherwise.
const DEFAULT_TOKEN_TTL: Duration = Duration::from_secs(3600);

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Run the server with these options.
    Run(Options),
    /// Print [`USAGE`] and exit successfully.
    Help,
}

impl Options {
    /// Turns OAuth mode on (as `--oauth`), keeping its settings if it is on already.
    #[must_use]
    pub fn with_oauth(mut self) -> Self {
        self.oauth.get_or_insert_with(OAuthOptions::default);
        self
    }

    /// Adds a pre-registered confidential client (as `--oauth-client ID:SECRET`), turning OAuth
    /// mode on; an earlier client with the same id is replaced.
    #[must_use]
    pub fn with_oauth_client(mut self, id: impl Into<String>, secret: impl Into<String>) -> Self {
        let oauth = self.oauth.get_or_insert_with(OAuthOptions::default);
        let id = id.into();
        oauth.clients.retain(|(known, _)| *known != id);
        oauth.clients.push((id, secret.into()));
        self
    }

    /// Sets the access token lifetime (as `--oauth-token-ttl`), turning OAuth mode on.
    #[must_use]
    pub fn with_oauth_token_ttl(mut self, ttl: Duration) -> Self {
        self.oauth.get_or_insert_with(OAuthOptions::default).token_ttl = ttl;
        self
    }

    /// Parses the arguments that follow the program name.
    ///
    /// Accepts `--page-size N`, `--page-size=N`, `--http ADDR` and `--http=ADDR` (and the
    /// same two forms for `--oauth-client` and `--oauth-token-ttl`). `--oauth` needs `--http`,
    /// and the other OAuth flags need `--oauth`. Returns a message describing the first problem
    /// on error.
    pub fn parse<I>(args: I) -> Result<Command, String>
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        let mut options = Options::default();
        let (mut oauth, mut oauth_flags) = (OAuthOptions::default(), None);
        let mut args = args.into_iter().map(Into::into);
        while let Some(arg) = args.next() {
            let (flag, inline_value) = match arg.split_once('=') {
                Some((flag, value)) if flag.starts_with("--") => (flag.to_owned(), Some(value.to_owned())),
                _ => (arg.clone(), None),
            };
            let takes_value =
                ["--page-size", "--http", "--oauth-client", "--oauth-token-ttl", "--task-bug", "--skill-bug"]
                    .contains(&flag.as_str());
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
                "--skills" => options.skills = true,
                "--skill-bug" => {
                    let value = inline_value
                        .or_else(|| args.next())
                        .ok_or_else(|| "--skill-bug needs a bug name".to_owned())?;
                    let bug = SkillBug::ALL.into_iter().find(|bug| bug.name() == value).ok_or_else(|| {
                        let names: Vec<&str> = SkillBug::ALL.iter().map(|bug| bug.name()).collect();
                        format!("--skill-bug expects one of {}, got {value:?}", names.join(", "))
                    })?;
                    options.skills = true;
                    options.skill_bug = Some(bug);
                }
                "--flood-stderr" => options.flood_stderr = true,
                "--spawn-grandchild" => options.spawn_grandchild = true,
                "--banner" => options.banner = true,
                "--legacy-only" => options.legacy_only = true,
                "--tasks" => options.tasks = true,
                "--task-bug" => {
                    let value = inline_value.or_else(|| args.next()).ok_or("--task-bug needs a bug name")?;
                    options.task_bug = Some(crate::TaskBug::parse(&value)?);
                    options.tasks = true;
                }
                "--oauth" => options.oauth = Some(OAuthOptions::default()),
                "--oauth-client" => {
                    let value = inline_value
                        .or_else(|| args.next())
                        .ok_or_else(|| "--oauth-client needs ID:SECRET".to_owned())?;
                    let (id, secret) = value
                        .split_once(':')
                        .filter(|(id, secret)| !id.is_empty() && !secret.is_empty())
                        .ok_or_else(|| format!("--oauth-client expects ID:SECRET, got {value:?}"))?;
                    if oauth.clients.iter().any(|(known, _)| known == id) {
                        return Err(format!("--oauth-client {id:?} is given twice"));
                    }
                    oauth.clients.push((id.to_owned(), secret.to_owned()));
                    oauth_flags.get_or_insert("--oauth-client");
                }
                "--oauth-token-ttl" => {
                    let value = inline_value
                        .or_else(|| args.next())
                        .ok_or_else(|| "--oauth-token-ttl needs a number of seconds".to_owned())?;
                    let seconds = value.parse().map_err(|_| {
                        format!("--oauth-token-ttl expects a non-negative number of seconds, got {value:?}")
                    })?;
                    oauth.token_ttl = Duration::from_secs(seconds);
                    oauth_flags.get_or_insert("--oauth-token-ttl");
                }
                "--exit-on-eof" => {}
                _ => return Err(format!("unknown argument {arg:?}")),
            }
        }
        match (&options.oauth, oauth_flags) {
            (Some(_), _) if options.http.is_none() => return Err("--oauth needs --http ADDR".to_owned()),
            (Some(_), _) => options.oauth = Some(oauth),
            (None, Some(flag)) => return Err(format!("{flag} needs --oauth")),
            (None, None) => {}
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
                tasks: false,
                task_bug: None,
                skills: false,
                skill_bug: None,
                oauth: None,
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

    #[test]
    fn parses_tasks_flags() {
        assert_eq!(
            Options::parse(["--tasks"]),
            Ok(Command::Run(Options { tasks: true, ..Options::default() }))
        );
        let bug = Some(crate::TaskBug::ReusedId);
        let expected = Ok(Command::Run(Options { tasks: true, task_bug: bug, ..Options::default() }));
        assert_eq!(Options::parse(["--task-bug", "reused-id"]), expected);
        assert_eq!(Options::parse(["--task-bug=reused-id"]), expected);
        assert!(Options::parse(["--task-bug"]).is_err());
        assert!(Options::parse(["--task-bug", "nope"]).unwrap_err().contains("reused-id"));
    }

    #[test]
    fn parses_skills_flags() {
        assert_eq!(
            Options::parse(["--skills"]),
            Ok(Command::Run(Options { skills: true, ..Options::default() }))
        );
        for bug in SkillBug::ALL {
            let expected = Options { skills: true, skill_bug: Some(bug), ..Options::default() };
            assert_eq!(Options::parse(["--skill-bug", bug.name()]), Ok(Command::Run(expected.clone())));
            assert_eq!(Options::parse([format!("--skill-bug={}", bug.name())]), Ok(Command::Run(expected)));
        }
        assert!(Options::parse(["--skill-bug"]).is_err());
        assert!(Options::parse(["--skill-bug", "nope"]).is_err());
        assert!(Options::parse(["--skills=yes"]).is_err());
    }

    #[test]
    fn parses_oauth_flags() {
        let parsed = Options::parse([
            "--oauth-client=ci:s3:cr3t",
            "--http",
            "127.0.0.1:0",
            "--oauth",
            "--oauth-token-ttl",
            "2",
            "--oauth-client",
            "other:x",
        ]);
        let expected = Options { http: Some("127.0.0.1:0".into()), ..Options::default() }
            .with_oauth_client("ci", "s3:cr3t")
            .with_oauth_client("other", "x")
            .with_oauth_token_ttl(Duration::from_secs(2));
        assert_eq!(parsed, Ok(Command::Run(expected)));
        let parsed = Options::parse(["--http=127.0.0.1:0", "--oauth"]);
        let oauth = OAuthOptions { clients: Vec::new(), token_ttl: Duration::from_secs(3600) };
        assert_eq!(
            parsed,
            Ok(Command::Run(Options {
                http: Some("127.0.0.1:0".into()),
                oauth: Some(oauth),
                ..Options::default()
            }))
        );
        assert_eq!(Options::parse(["--oauth"]), Err("--oauth needs --http ADDR".to_owned()));
        let without = Options::parse(["--http=127.0.0.1:0", "--oauth-token-ttl=5"]);
        assert_eq!(without, Err("--oauth-token-ttl needs --oauth".to_owned()));
        for bad in [
            &["--oauth-client", "no-secret"][..],
            &["--oauth-client", ":secret"],
            &["--oauth-client", "id:"],
            &["--oauth-client"],
            &["--oauth-client=a:1", "--oauth-client=a:2"],
            &["--oauth-token-ttl", "-1"],
            &["--oauth-token-ttl"],
            &["--oauth=yes"],
        ] {
            let args = [&["--http", "127.0.0.1:0", "--oauth"][..], bad].concat();
            assert!(Options::parse(args.clone()).is_err(), "{args:?}");
        }
    }

    #[test]
    fn builder_methods_turn_oauth_on() {
        assert_eq!(Options::default().with_oauth().oauth, Some(OAuthOptions::default()));
        let options = Options::default().with_oauth_client("a", "1").with_oauth_client("a", "2").with_oauth();
        let oauth = options.oauth.expect("on");
        assert_eq!(oauth.clients, [("a".to_owned(), "2".to_owned())]);
        assert_eq!(oauth.token_ttl, DEFAULT_TOKEN_TTL);
    }
}
