//! Tool arguments of any serializable type: checked to be a JSON object (or nothing) without
//! serializing them, then serialized once, straight into the request's bytes; and every
//! request's params serialized before any lock is taken ([`serialize_params`]).
//!
//! `call_tool(name, json!({..}))` used to take the `Value` apart into a `CallToolRequestParams`;
//! a struct would have to go through `serde_json::to_value` first, a second serialization of the
//! whole arguments. Here no type is copied: [`kind`] asks the arguments' `Serialize` impl for
//! its first call only (a map, a struct, nothing, or something else) and stops there, and
//! [`ToolCallParams`] borrows them into the params the engine serializes.

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;

use mcp_sansio::schema::{CallTool, CallToolRequestParams, CallToolResult, Request};
use mcp_sansio::{SerializedParams, UsageError};
use serde::Serialize;
use serde::ser::{self, Impossible, SerializeStruct, Serializer};

use crate::Error;

/// The largest buffer a thread keeps for the next request's params (a larger one, left by a
/// call with large arguments, goes).
const KEPT_BUFFER: usize = 64 * 1024;

thread_local! {
    /// This thread's buffer for the params of its next request.
    static BUFFER: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// Serializes a request's params now, on the caller's thread, before any lock of the client is
/// taken: their `Serialize` impl is the application's code (tool arguments, a custom
/// request's params), which may take any time, and no user code runs under a lock. The engine
/// then sends the bytes as they are ([`ClientConnection::send_serialized`]), so this costs what
/// its own serialization under the lock did: one pass, into a buffer this thread reuses
/// (give it back with [`recycle`]).
///
/// [`ClientConnection::send_serialized`]: mcp_sansio::ClientConnection::send_serialized
pub(crate) fn serialize_params<T: Serialize + ?Sized>(params: &T) -> Result<SerializedParams, Error> {
    // Taken out, not borrowed: a `Serialize` impl that makes a call of its own gets a new one.
    let buffer = BUFFER.with(Cell::take);
    Ok(SerializedParams::serialize(buffer, params)?)
}

/// Gives the buffer of `params` back to this thread, for its next request.
pub(crate) fn recycle(params: SerializedParams) {
    let buffer = params.into_buffer();
    if buffer.capacity() <= KEPT_BUFFER {
        BUFFER.with(|kept| kept.set(buffer));
    }
}

/// `tools/call` with params that borrow the caller's arguments.
pub(crate) struct CallToolArguments<'a, A>(PhantomData<&'a A>);

impl<'a, A: Serialize> Request for CallToolArguments<'a, A> {
    const METHOD: &'static str = CallTool::METHOD;
    type Params = ToolCallParams<'a, A>;
    type Result = CallToolResult;
}

/// The params of `tools/call`: the tool's name and, unless there are none, its arguments
/// (already checked by [`ToolCallParams::new`] to serialize as a JSON object).
pub(crate) struct ToolCallParams<'a, A> {
    name: &'a str,
    arguments: Option<&'a A>,
}

impl<'a, A: Serialize> ToolCallParams<'a, A> {
    /// The params calling `name` with `arguments`; refused unless they serialize as a JSON
    /// object (sent as `arguments`) or as nothing (`()`, `None`, `null`: no `arguments`).
    pub(crate) fn new(name: &'a str, arguments: &'a A) -> Result<Self, Error> {
        let arguments = match kind(arguments) {
            Kind::Object => Some(arguments),
            Kind::Nothing => None,
            Kind::Other(what) => {
                let reason = format!("tool arguments must be a JSON object (or nothing), not {what}");
                return Err(UsageError::InvalidParams(reason).into());
            }
            Kind::Failed(reason) => return Err(UsageError::InvalidParams(reason).into()),
        };
        Ok(Self { name, arguments })
    }
}

impl<A: Serialize> Serialize for ToolCallParams<'_, A> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut params = serializer.serialize_struct("CallToolRequestParams", 2)?;
        params.serialize_field("name", self.name)?;
        if let Some(arguments) = self.arguments {
            params.serialize_field("arguments", arguments)?;
        }
        params.end()
    }
}

/// The params of `tools/call` as the typed model has them, for implementors of
/// [`ClientApi`](crate::ClientApi) that only have [`call_tool_with`](crate::ClientApi::call_tool_with):
/// the arguments go through `serde_json::to_value` (one more copy than [`ToolCallParams`]).
pub(crate) fn tool_params<A: Serialize>(name: &str, arguments: &A) -> Result<CallToolRequestParams, Error> {
    let checked = ToolCallParams::new(name, arguments)?;
    let mut params = CallToolRequestParams::new(name);
    if let Some(arguments) = checked.arguments {
        match serde_json::to_value(arguments) {
            Ok(serde_json::Value::Object(map)) => params.arguments = Some(map),
            // A `Serialize` impl that answers differently each time it is asked.
            Ok(_) => {
                let reason = "tool arguments serialized as an object, then as something else";
                return Err(UsageError::InvalidParams(reason.to_owned()).into());
            }
            Err(error) => return Err(UsageError::InvalidParams(error.to_string()).into()),
        }
    }
    Ok(params)
}

/// What a value serializes as, at its top level.
#[derive(Debug)]
enum Kind {
    /// A map, a struct, or an enum variant with data (`{"Variant": ..}`): a JSON object.
    Object,
    /// `()`, `None`, a unit struct: JSON `null`.
    Nothing,
    /// Anything else (what, for the error message).
    Other(&'static str),
    /// Its `Serialize` impl failed.
    Failed(String),
}

/// What `value` serializes as, from the first call its `Serialize` impl makes (nothing is
/// serialized: the probe stops it there).
fn kind<A: Serialize + ?Sized>(value: &A) -> Kind {
    match value.serialize(Probe) {
        Err(Found(kind)) => kind,
        // A `Serialize` impl that calls no serializer method at all.
        Ok(never) => match never {},
    }
}

/// The probe's answer, carried as its "error" so that serialization stops at once.
#[derive(Debug)]
struct Found(Kind);

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

impl std::error::Error for Found {}

impl ser::Error for Found {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Found(Kind::Failed(message.to_string()))
    }
}

/// A serializer that answers the first call with what it was asked to serialize.
struct Probe;

/// The probe never succeeds: every path ends in [`Found`].
enum Never {}

fn found<T>(kind: Kind) -> Result<T, Found> {
    Err(Found(kind))
}

impl Serializer for Probe {
    type Ok = Never;
    type Error = Found;
    type SerializeSeq = Impossible<Never, Found>;
    type SerializeTuple = Impossible<Never, Found>;
    type SerializeTupleStruct = Impossible<Never, Found>;
    type SerializeTupleVariant = Impossible<Never, Found>;
    type SerializeMap = Impossible<Never, Found>;
    type SerializeStruct = Impossible<Never, Found>;
    type SerializeStructVariant = Impossible<Never, Found>;

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Found> {
        found(Kind::Object)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Found> {
        found(Kind::Object)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<Never, Found> {
        found(Kind::Object)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Found> {
        found(Kind::Object)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Found> {
        found(Kind::Object)
    }
    fn serialize_unit(self) -> Result<Never, Found> {
        found(Kind::Nothing)
    }
    fn serialize_none(self) -> Result<Never, Found> {
        found(Kind::Nothing)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Never, Found> {
        found(Kind::Nothing)
    }
    // Wrappers are what they wrap.
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Never, Found> {
        value.serialize(self)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<Never, Found> {
        value.serialize(self)
    }
    fn serialize_bool(self, _: bool) -> Result<Never, Found> {
        found(Kind::Other("a boolean"))
    }
    fn serialize_i8(self, _: i8) -> Result<Never, Found> {
        found(Kind::Other("a number"))
    }
    fn serialize_i16(self, _: i16) -> Result<Never, Found> {
        found(Kind::Other("a number"))
    }
    fn serialize_i32(self, _: i32) -> Result<Never, Found> {
        found(Kind::Other("a number"))
    }
    fn serialize_i64(self, _: i64) -> Result<Never, Found> {
        found(Kind::Other("a number"))
    }
    fn serialize_u8(self, _: u8) -> Result<Never, Found> {
        found(Kind::Other("a number"))
    }
    fn serialize_u16(self, _: u16) -> Result<Never, Found> {
        found(Kind::Other("a number"))
    }
    fn serialize_u32(self, _: u32) -> Result<Never, Found> {
        found(Kind::Other("a number"))
    }
    fn serialize_u64(self, _: u64) -> Result<Never, Found> {
        found(Kind::Other("a number"))
    }
    fn serialize_f32(self, _: f32) -> Result<Never, Found> {
        found(Kind::Other("a number"))
    }
    fn serialize_f64(self, _: f64) -> Result<Never, Found> {
        found(Kind::Other("a number"))
    }
    fn serialize_char(self, _: char) -> Result<Never, Found> {
        found(Kind::Other("a string"))
    }
    fn serialize_str(self, _: &str) -> Result<Never, Found> {
        found(Kind::Other("a string"))
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<Never, Found> {
        found(Kind::Other("a string"))
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<Never, Found> {
        found(Kind::Other("an array"))
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Found> {
        found(Kind::Other("an array"))
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Found> {
        found(Kind::Other("an array"))
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, Found> {
        found(Kind::Other("an array"))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use serde_json::json;

    use super::*;

    #[derive(Serialize)]
    struct Point {
        x: i32,
    }

    #[derive(Serialize)]
    struct Wrapper(Point);

    #[derive(Serialize)]
    enum Shape {
        Dot,
        Circle { r: f64 },
    }

    /// The bytes the engine would send: the params serialized once.
    fn params<A: Serialize>(arguments: A) -> Result<String, Error> {
        Ok(serde_json::to_string(&ToolCallParams::new("t", &arguments)?).unwrap())
    }

    #[test]
    fn objects_are_sent_as_they_serialize_and_nothing_as_no_arguments() {
        assert_eq!(
            params(json!({"a": [1, {"b": null}]})).unwrap(),
            r#"{"name":"t","arguments":{"a":[1,{"b":null}]}}"#
        );
        assert_eq!(params(Point { x: 1 }).unwrap(), r#"{"name":"t","arguments":{"x":1}}"#);
        assert_eq!(params(Wrapper(Point { x: 2 })).unwrap(), r#"{"name":"t","arguments":{"x":2}}"#);
        assert_eq!(params(Some(&Point { x: 3 })).unwrap(), r#"{"name":"t","arguments":{"x":3}}"#);
        assert_eq!(
            params(HashMap::from([(7, "seven")])).unwrap(),
            r#"{"name":"t","arguments":{"7":"seven"}}"#
        );
        assert_eq!(
            params(Shape::Circle { r: 1.5 }).unwrap(),
            r#"{"name":"t","arguments":{"Circle":{"r":1.5}}}"#
        );
        for nothing in [params(()), params(json!(null)), params(None::<Point>)] {
            assert_eq!(nothing.unwrap(), r#"{"name":"t"}"#);
        }
    }

    #[test]
    fn anything_else_is_refused_naming_what_it_was() {
        for (refused, what) in [
            (params([1, 2]), "an array"),
            (params(json!("text")), "a string"),
            (params(42), "a number"),
            (params(true), "a boolean"),
            (params(Shape::Dot), "a string"),
        ] {
            let Err(Error::Usage(UsageError::InvalidParams(reason))) = refused else { panic!("{refused:?}") };
            assert!(reason.ends_with(what), "{reason}");
        }
    }

    #[test]
    fn the_typed_params_match_the_borrowed_ones() {
        let typed = tool_params("t", &Point { x: 1 }).unwrap();
        assert_eq!(serde_json::to_string(&typed).unwrap(), params(Point { x: 1 }).unwrap());
        assert_eq!(tool_params("t", &()).unwrap().arguments, None);
        assert!(tool_params("t", &[1]).is_err());
    }
}
