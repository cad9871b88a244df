//! The one response body type every handler answers with, apart so the handlers in their own
//! modules (logs, watches) need not reach back into the router.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::BoxBody};

pub type Body = BoxBody<Bytes, Infallible>;

/// A whole body from bytes.
pub fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed()
}
