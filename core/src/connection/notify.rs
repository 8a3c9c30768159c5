//! The client's own notifications: any method the version has, and `roots_changed`, the one
//! the protocol names for a client.

use std::borrow::Cow;

use super::ClientConnection;
use super::meta::one_line_json;
use crate::error::UsageError;
use crate::jsonrpc;
use crate::schema::{Notification, RootsListChangedNotification};
use crate::transmit::TransmitKind;

impl ClientConnection {
    /// Sends a notification. For `notifications/roots/list_changed`, prefer
    /// [`roots_changed`](Self::roots_changed), which knows what each version wants.
    pub fn notify(&mut self, method: &str, params: Option<&[u8]>) -> Result<(), UsageError> {
        self.check_notify(method)?;
        let params = params.map(one_line_json).transpose()?;
        let mut bytes = Vec::new();
        jsonrpc::encode_notification(&mut bytes, method, params.as_deref());
        self.queue(bytes, TransmitKind::Notification { method: Cow::Owned(method.to_owned()) });
        Ok(())
    }

    /// Whether the connection would send notification `method` now.
    pub(crate) fn check_notify(&self, method: &str) -> Result<(), UsageError> {
        let version = self.ready_session()?.version;
        if method == "notifications/initialized" {
            return Err(UsageError::ReservedMethod(method.to_owned()));
        }
        if version.is_modern() && method == RootsListChangedNotification::METHOD {
            // Roots are asked for per request now (multi round-trip input).
            return Err(UsageError::NotInVersion { method: method.to_owned(), version, replacement: None });
        }
        Ok(())
    }

    /// Tells the server that the client's roots changed, so that it asks for them again: sends
    /// `notifications/roots/list_changed` in the `initialize` era. On 2026-07-28 it sends
    /// nothing and succeeds, since a server asks for the roots within each request that needs
    /// them and has nothing to forget.
    ///
    /// The client must have declared that it sends these
    /// ([`ClientCapabilities::with_roots(true)`](crate::schema::ClientCapabilities::with_roots)):
    /// otherwise [`UsageError::CapabilityNotDeclared`], in every version.
    pub fn roots_changed(&mut self) -> Result<(), UsageError> {
        match self.roots_change_to_send()? {
            true => self.notify(RootsListChangedNotification::METHOD, None),
            false => Ok(()),
        }
    }

    /// Whether [`roots_changed`](Self::roots_changed) sends anything on this connection.
    pub(crate) fn roots_change_to_send(&self) -> Result<bool, UsageError> {
        let version = self.ready_session()?.version;
        let declared =
            self.config.capabilities.roots.as_ref().is_some_and(|roots| roots.list_changed == Some(true));
        if !declared {
            return Err(UsageError::CapabilityNotDeclared { capability: "roots.listChanged" });
        }
        Ok(!version.is_modern())
    }
}
