//! Redirects, decided by the session (drivers follow none): a `307` or `308` with a `Location`
//! is sent again there, the same method, body and MCP headers, at most
//! [`HttpConfig::max_redirects`](crate::http::HttpConfig::max_redirects) times in a row; the
//! custom headers and the credentials stay behind when it leaves the MCP server's origin, and
//! `https` never goes to `http`. Every other redirect fails the exchange with
//! [`TransportError::RedirectRefused`], naming the status and the `Location`.
//!
//! Each exchange follows its own redirects: the next request starts again at the configured
//! URL (a `308` does not move the endpoint), as the MCP SDKs' HTTP clients do per request.

use std::time::Instant;

use super::*;

/// Headers that carry credentials, whoever added them: never sent to another origin.
const CREDENTIAL_HEADERS: &[&str] = &["authorization", "proxy-authorization", "cookie", "dpop"];

impl HttpSession {
    /// Exchange `stream` was answered with the redirect `status` (3xx) to `location`: sends
    /// it again there, or fails it.
    pub(super) fn on_redirect(
        &mut self,
        now: Instant,
        stream: StreamId,
        status: u16,
        location: Option<&str>,
    ) {
        let Some(mut s) = self.streams.remove(&stream) else { return };
        // The redirect's body is not wanted.
        self.actions.push_back(HttpAction::Abort(stream));
        let sent = s.sent.take();
        let refused = |reason| TransportError::RedirectRefused {
            status,
            location: bounded(location.unwrap_or("")),
            reason,
        };
        let next = match (status, location, sent) {
            (307 | 308, Some(location), Some(sent)) => {
                self.follow(sent, location).map_err(|reason| match reason {
                    Refusal::Refused(reason) => refused(reason),
                    Refusal::TooMany(hops) => {
                        TransportError::TooManyRedirects { hops, location: bounded(location) }
                    }
                })
            }
            (307 | 308, Some(_), None) => Err(refused(RedirectRefusal::Disabled)),
            (307 | 308, None, _) => Err(refused(RedirectRefusal::InvalidLocation)),
            _ => Err(refused(RedirectRefusal::Status)),
        };
        match next {
            Ok(sent) => self.reissue(now, stream, s, sent),
            Err(error) => {
                tracing::warn!(%error, "redirect not followed");
                // As if no response came: the role decides what the failure means.
                s.status = None;
                if matches!(self.standalone, Standalone::Opening { stream: opening, .. } if opening == stream)
                {
                    self.standalone = Standalone::Active;
                }
                self.finish_stream(now, s, End::Failed(error));
            }
        }
    }

    /// Where the redirect leads, or why it is not followed.
    fn follow(&self, mut sent: Box<Sent>, location: &str) -> Result<Box<Sent>, Refusal> {
        let Some(target) = resolve(&sent.url, location) else {
            return Err(Refusal::Refused(RedirectRefusal::InvalidLocation));
        };
        if sent.url.get(..6).is_some_and(|s| s.eq_ignore_ascii_case("https:")) && target.starts_with("http:")
        {
            return Err(Refusal::Refused(RedirectRefusal::Downgrade));
        }
        if sent.hops >= self.config.max_redirects {
            return Err(Refusal::TooMany(sent.hops));
        }
        if url::origin(&target) != url::origin(&sent.url) && !sent.foreign {
            // Another origin gets no credentials and none of the application's headers (which
            // come first, see `base_headers`), only the MCP headers.
            let custom = self.config.headers.len().min(sent.headers.len());
            sent.headers.drain(..custom);
            sent.headers.retain(|(name, _)| !CREDENTIAL_HEADERS.iter().any(|h| name.eq_ignore_ascii_case(h)));
            sent.foreign = true;
        }
        sent.hops += 1;
        sent.url = target;
        Ok(sent)
    }

    /// Sends exchange `old` (answered by a redirect) again as `sent` says, keeping its role,
    /// deadline and event-stream decoder.
    fn reissue(&mut self, now: Instant, old: StreamId, s: Stream, sent: Box<Sent>) {
        tracing::debug!(url = %sent.url, hops = sent.hops, foreign = sent.foreign, "following a redirect");
        let body = match &s.role {
            Role::Post { out, .. } => out.body.clone(),
            Role::Reinitialize => self.initialize.as_ref().map(|(_, body)| body.clone()).unwrap_or_default(),
            Role::ReinitializedNotice => crate::jsonrpc::INITIALIZED.to_vec(),
            Role::Get { .. } | Role::LegacyGet | Role::Delete | Role::Auth => Vec::new(),
        };
        let (method, url, headers) = (sent.method, sent.url.clone(), sent.headers.clone());
        let Stream { role, deadline, decoder, .. } = s;
        let stream = self.issue(now, url, headers, body, role, deadline, Some(sent), method);
        if let Some(new) = self.streams.get_mut(&stream) {
            new.decoder = decoder;
        }
        if let Standalone::Opening { stream: opening, .. } = &mut self.standalone {
            if *opening == old {
                *opening = stream;
            }
        }
    }
}

/// Why a redirect is not followed, before it is an error.
enum Refusal {
    Refused(RedirectRefusal),
    /// The redirects followed already.
    TooMany(u32),
}

/// `location` resolved against `base`, when it is an `http` or `https` URL.
fn resolve(base: &str, location: &str) -> Option<String> {
    let target = ::url::Url::parse(base).ok()?.join(location.trim()).ok()?;
    matches!(target.scheme(), "http" | "https").then(|| String::from(target))
}

#[cfg(test)]
mod tests {
    use super::resolve;

    #[test]
    fn locations() {
        let base = "http://127.0.0.1:3000/mcp?x=1";
        assert_eq!(resolve(base, "/elsewhere").as_deref(), Some("http://127.0.0.1:3000/elsewhere"));
        assert_eq!(resolve(base, "next").as_deref(), Some("http://127.0.0.1:3000/next"));
        assert_eq!(resolve(base, "//other:4000/m").as_deref(), Some("http://other:4000/m"));
        assert_eq!(resolve(base, "https://x.test/m").as_deref(), Some("https://x.test/m"));
        assert_eq!(resolve(base, "javascript:alert(1)"), None);
        assert_eq!(resolve(base, "ftp://x.test/"), None);
        assert_eq!(resolve("not a url", "/m"), None);
    }
}
