//! OAuth for MCP servers that require it: [`OAuth`] (what [`ClientBuilder::oauth`] takes), the
//! [`AuthorizationHandler`] an application implements to send its user to the authorization
//! page, and the [`TokenStore`] that keeps credentials between runs.
//!
//! The protocol is the engine's [`Authorizer`](mcp_sansio::auth::Authorizer); the driver runs
//! its requests through the same [`HttpTransport`](crate::HttpTransport) as the MCP requests,
//! hands it the operating system's randomness and the time of day (for the signed JWTs of
//! `private_key_jwt` and DPoP), calls the handler when the user must approve, and saves what
//! changed in the store.
//!
//! [`ClientBuilder::oauth`]: crate::ClientBuilder::oauth

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, PoisonError};

use mcp_sansio::auth::{AuthConfig, Credentials, SecureRandom};

use crate::locks::{self, OrderedMutex};

/// A boxed, sendable future.
pub type AuthFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Sends the user to the authorization server and brings back where it redirected them.
///
/// [`authorize`](Self::authorize) gets the authorization URL; it shows it to the user (opens a
/// browser, prints it), waits for the browser to reach the redirect URI, and resolves with that
/// whole URL (`…?code=…&state=…`). An `Err` abandons the authorization: the requests waiting
/// for it fail with [`AuthError::Abandoned`](mcp_sansio::auth::AuthError::Abandoned).
///
/// [`LoopbackRedirect`](crate::LoopbackRedirect) is a ready one for desktop and command-line
/// apps.
pub trait AuthorizationHandler: Send + Sync + 'static {
    /// Sends the user to `url`; resolves with the redirect URL.
    fn authorize(&self, url: String) -> AuthFuture<Result<String, String>>;
}

impl<F, Fut> AuthorizationHandler for F
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<String, String>> + Send + 'static,
{
    fn authorize(&self, url: String) -> AuthFuture<Result<String, String>> {
        Box::pin(self(url))
    }
}

/// Keeps a client's registration and tokens for one server between runs.
///
/// Called by the driver when they change and once at connection; keep it quick (a small file
/// write is fine). [`MemoryTokenStore`] is the default; the `oauth` example has a file store
/// that writes with permissions 0600.
pub trait TokenStore: Send + Sync + 'static {
    /// What was saved last, if anything.
    fn load(&self) -> Option<Credentials>;
    /// Saves the credentials (they replace what was there).
    fn save(&self, credentials: &Credentials);
}

/// A [`TokenStore`] in memory: tokens last as long as the process (shared by the clients that
/// hold a clone of the same `Arc`).
#[derive(Debug, Default)]
pub struct MemoryTokenStore {
    credentials: OrderedMutex<Option<Credentials>, { locks::LEAF }>,
}

impl TokenStore for MemoryTokenStore {
    fn load(&self) -> Option<Credentials> {
        self.credentials.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    fn save(&self, credentials: &Credentials) {
        *self.credentials.lock().unwrap_or_else(PoisonError::into_inner) = Some(credentials.clone());
    }
}

impl<T: TokenStore + ?Sized> TokenStore for Arc<T> {
    fn load(&self) -> Option<Credentials> {
        (**self).load()
    }

    fn save(&self, credentials: &Credentials) {
        (**self).save(credentials)
    }
}

/// The operating system's random generator (`getrandom`), for PKCE verifiers, `state`, JWT ids
/// and the DPoP key.
#[derive(Debug, Clone, Copy, Default)]
pub struct OsRandom;

impl SecureRandom for OsRandom {
    fn fill(&mut self, dest: &mut [u8]) {
        // The OS generator does not fail on the platforms smol runs on; if it ever did, an
        // all-zero verifier must not be used quietly.
        if let Err(error) = getrandom::fill(dest) {
            panic!("the operating system's random generator failed: {error}");
        }
    }
}

/// How a client authorizes with an OAuth-protected server: the engine's [`AuthConfig`], who
/// sends the user to the authorization page, and where credentials are kept.
///
/// ```no_run
/// use mcp_smol::mcp_sansio::auth::AuthConfig;
/// use mcp_smol::mcp_sansio::http::HttpConfig;
/// use mcp_smol::mcp_sansio::schema::Implementation;
/// use mcp_smol::{ClientApi, ClientBuilder, LoopbackRedirect, OAuth};
///
/// fn main() -> Result<(), Box<dyn std::error::Error>> {
///     smol::block_on(async {
///         // Receives the browser's redirect on 127.0.0.1 and prints the URL to open.
///         let redirect = LoopbackRedirect::bind(|url| println!("Open {url} to authorize"))?;
///         let oauth = OAuth::new(AuthConfig::authorization_code(redirect.redirect_uri()).client_name("my-app"))
///             .handler(redirect);
///         let client = ClientBuilder::new(Implementation::new("my-app", "1.0.0"))
///             .oauth(oauth)
///             // `mcp_smol_transport()` stands for `mcp_hyper::HyperTransport::new()` (or
///             // `mcp_surf::SurfTransport::new()`): mcp-smol's docs cannot depend on either.
///             .spawn_http(HttpConfig::new("https://mcp.example.com/mcp"), mcp_smol_transport())
///             .await?;
///         println!("{:?}", client.list_all_tools().await?);
///         client.close().await;
///         Ok(())
///     })
/// }
/// # fn mcp_smol_transport() -> std::sync::Arc<dyn mcp_smol::HttpTransport> { unimplemented!() }
/// ```
#[derive(Clone)]
pub struct OAuth {
    pub(crate) config: AuthConfig,
    pub(crate) handler: Option<Arc<dyn AuthorizationHandler>>,
    pub(crate) store: Arc<dyn TokenStore>,
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth")
            .field("config", &self.config)
            .field("handler", &self.handler.is_some())
            .finish_non_exhaustive()
    }
}

impl OAuth {
    /// OAuth with `config`, an in-memory token store and no handler (enough for the grants
    /// without a user: client credentials, JWT bearer, enterprise-managed authorization; the
    /// authorization code grant needs [`handler`](Self::handler)).
    pub fn new(config: AuthConfig) -> Self {
        OAuth { config, handler: None, store: Arc::new(MemoryTokenStore::default()) }
    }

    /// Who sends the user to the authorization page.
    #[must_use]
    pub fn handler(mut self, handler: impl AuthorizationHandler) -> Self {
        self.handler = Some(Arc::new(handler));
        self
    }

    /// Where credentials are kept between runs.
    #[must_use]
    pub fn store(mut self, store: impl TokenStore) -> Self {
        self.store = Arc::new(store);
        self
    }
}

pub(crate) use crate::clock::unix_now;
