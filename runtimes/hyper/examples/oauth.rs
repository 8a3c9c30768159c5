//! OAuth 2.1 from start to end on one machine: the bundled demo server in OAuth mode (an MCP
//! server and its authorization server on 127.0.0.1), and a client that discovers it,
//! registers, sends "the user" to the authorization page, receives the redirect on a loopback
//! port, and calls tools with the token, stepping up for more scope where a tool needs it.
//! Credentials go to a file (permissions 0600), so a second connection needs no authorization.
//!
//! ```text
//! cargo run --example oauth              # a simulated browser approves
//! cargo run --example oauth -- --browser # you open the printed URL in your browser
//! ```

use std::error::Error;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;

use mcp_hyper::HyperTransport;
use mcp_smol::mcp_sansio::auth::{AuthConfig, Credentials};
use mcp_smol::mcp_sansio::http::HttpConfig;
use mcp_smol::mcp_sansio::schema::Implementation;
use mcp_smol::{ClientApi, ClientBuilder, LoopbackRedirect, OAuth, TokenStore};
use serde_json::json;

/// A [`TokenStore`] in a JSON file only its owner can read (0600 on Unix).
struct FileTokenStore {
    path: PathBuf,
}

impl TokenStore for FileTokenStore {
    fn load(&self) -> Option<Credentials> {
        let text = std::fs::read_to_string(&self.path).ok()?;
        serde_json::from_str(&text).ok()
    }

    fn save(&self, credentials: &Credentials) {
        let Ok(json) = serde_json::to_vec_pretty(credentials) else { return };
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        match options.open(&self.path).and_then(|mut file| file.write_all(&json)) {
            Ok(()) => println!("  (credentials saved to {})", self.path.display()),
            Err(error) => eprintln!("  cannot save credentials: {error}"),
        }
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let by_hand = std::env::args().any(|arg| arg == "--browser");

    // The demo server in OAuth mode, on a free port, in this process.
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    std::thread::spawn(move || {
        mcp_demo_server::serve_http(listener, mcp_demo_server::Options::default().with_oauth())
    });
    println!("Demo server (MCP and authorization server) at {url}");

    let dir = std::env::temp_dir().join(format!("mcp-oauth-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let store = std::sync::Arc::new(FileTokenStore { path: dir.join("credentials.json") });

    // The redirect comes back to a loopback port; "opening the browser" is up to us.
    let redirect = LoopbackRedirect::bind(move |authorization_url| {
        println!("  Authorize at: {authorization_url}");
        if !by_hand {
            let url = authorization_url.to_owned();
            std::thread::spawn(move || simulated_browser(&url));
        }
    })?;
    let config =
        AuthConfig::authorization_code(redirect.redirect_uri()).client_name("mcp-sansio oauth example");
    let oauth = OAuth::new(config).handler(redirect).store(store.clone());

    smol::block_on(async {
        println!("First connection:");
        let client = ClientBuilder::new(Implementation::new("oauth-example", "1.0.0"))
            .oauth(oauth.clone())
            .spawn_http(HttpConfig::new(url.as_str()), HyperTransport::new())
            .await?;
        let tools = client.list_all_tools().await?;
        println!("  tools: {}", tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", "));
        let result = client.call_tool("echo", json!({"message": "hello with a token"})).await?;
        println!("  echo: {:?}", result.content);
        // `admin_echo` needs the mcp:admin scope: the server answers 403 insufficient_scope and
        // the client authorizes again for more (a "step-up"), then sends the call again.
        let result = client.call_tool("admin_echo", json!({"message": "hello, admin"})).await?;
        println!("  admin_echo after a step-up: {:?}", result.content);
        client.close().await;

        println!("Second connection (the stored token is used; no authorization):");
        let client = ClientBuilder::new(Implementation::new("oauth-example", "1.0.0"))
            .oauth(oauth)
            .spawn_http(HttpConfig::new(url.as_str()), HyperTransport::new())
            .await?;
        let result = client.call_tool("echo", json!({"message": "hello again"})).await?;
        println!("  echo: {:?}", result.content);
        client.close().await;
        Ok::<_, Box<dyn Error>>(())
    })?;
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

/// What a browser does when the user approves: follow the authorization URL to the redirect.
fn simulated_browser(url: &str) {
    let location = match get(url) {
        Ok(Some(location)) => location,
        Ok(None) => return eprintln!("  the authorization server did not redirect"),
        Err(error) => return eprintln!("  browser: {error}"),
    };
    println!("  (the browser is redirected to the loopback port)");
    if let Err(error) = get(&location) {
        eprintln!("  browser: {error}");
    }
}

/// A plain HTTP/1.1 GET to 127.0.0.1: the `Location` of the answer, if any.
fn get(url: &str) -> std::io::Result<Option<String>> {
    let rest = url.strip_prefix("http://").ok_or_else(|| std::io::Error::other("not an http URL"))?;
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = TcpStream::connect(authority)?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n")?;
    let mut reader = BufReader::new(stream);
    let mut location = None;
    let mut line = String::new();
    while reader.read_line(&mut line)? > 2 {
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("location") {
                location = Some(value.trim().to_owned());
            }
        }
        line.clear();
    }
    let _ = reader.read_to_end(&mut Vec::new());
    Ok(location)
}
