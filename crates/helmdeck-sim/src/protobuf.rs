//! Decoder for Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`).
//!
//! Helm's release storage talks to the API server through a typed client-go clientset, and that
//! clientset sends Secret (and, with `HELM_DRIVER=configmap`, ConfigMap; with
//! `--create-namespace`, Namespace) POST/PUT bodies as protobuf. It does not fall back to JSON on
//! a 415, so the simulated API server has to understand these bodies. The store works on JSON,
//! so this module turns each body into the JSON object a JSON client would have sent.
//!
//! The parser is hand-written (no prost, no generated Kubernetes types): only three kinds are
//! needed, generated types would bring every kind and a code generator for them, and a small
//! parser makes it easy to guarantee that no input, however broken, can panic the server.
//! Calendar dates come from jiff (through `helmdeck_formats::time`).
//! Semantics follow k8s.io/apimachinery's gogo-protobuf code where it matters for the JSON:
//! empty strings and zero times are left out (Go always writes them on the wire, but JSON
//! `omitempty` drops them), timestamps keep whole seconds only, `data` bytes become base64.

use std::fmt;

use base64::{Engine as _, engine::general_purpose::STANDARD};
use serde_json::{Map, Value};

/// Prefix of every Kubernetes protobuf body; it tells the envelope apart from a bare message.
const MAGIC: &[u8; 4] = b"k8s\0";

/// Highest legal protobuf field number (2^29 - 1).
const MAX_FIELD_NUMBER: u64 = (1 << 29) - 1;

/// Why a protobuf body could not be turned into JSON. The message names the message and field
/// involved so a failed request can be diagnosed from the server log alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtoError(pub String);

impl fmt::Display for ProtoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ProtoError {}

impl ProtoError {
    fn new(msg: impl Into<String>) -> Self {
        ProtoError(msg.into())
    }

    /// Prefixes the message with where the failure happened (outermost context first).
    fn context(self, ctx: &str) -> Self {
        ProtoError(format!("{ctx}: {}", self.0))
    }
}

type Result<T> = std::result::Result<T, ProtoError>;

mod schema;

/// Decodes a `k8s\0`-prefixed protobuf body into the JSON object a JSON client would send.
///
/// Supported: core `v1` Secret, ConfigMap and Namespace. Anything else is an error rather than a
/// guess, so the server can answer 415 and the mismatch shows up clearly.
pub fn decode_object(body: &[u8]) -> Result<Value> {
    let envelope = body.strip_prefix(MAGIC).ok_or_else(|| {
        let shown = &body[..body.len().min(MAGIC.len())];
        ProtoError::new(format!(
            "not a Kubernetes protobuf body: expected magic prefix 6b 38 73 00 (\"k8s\\0\"), got {}",
            hex(shown)
        ))
    })?;
    let unknown = decode_unknown(envelope).map_err(|e| e.context("invalid protobuf body"))?;
    let target = format!("{} {}", unknown.api_version, unknown.kind);
    if !unknown.content_encoding.is_empty() {
        return Err(ProtoError::new(format!(
            "{target}: unsupported contentEncoding {:?} (only unencoded raw objects are supported)",
            unknown.content_encoding
        )));
    }
    let raw = unknown.raw.ok_or_else(|| {
        ProtoError::new(format!(
            "{target}: runtime.Unknown has no raw object (field 2)"
        ))
    })?;
    let mut object = Map::new();
    match (unknown.api_version.as_str(), unknown.kind.as_str()) {
        ("v1", "Secret") => decode_secret(raw, &mut object),
        ("v1", "ConfigMap") => decode_config_map(raw, &mut object),
        ("v1", "Namespace") => decode_namespace(raw, &mut object),
        (api_version, kind) => match schema::kind(api_version, kind) {
            Some(msg) => schema::decode(msg, raw, &mut object),
            None => {
                return Err(ProtoError::new(format!(
                    "unsupported protobuf object: apiVersion {api_version:?} kind {kind:?} (not a kind `kubectl create` sends)"
                )));
            }
        },
    }
    .map_err(|e| e.context(&format!("invalid protobuf {target} body")))?;
    object.insert("apiVersion".into(), Value::String(unknown.api_version));
    object.insert("kind".into(), Value::String(unknown.kind));
    Ok(Value::Object(object))
}

// ---------------------------------------------------------------------------------------------
// Wire level: fields, varints, length-delimited values.

/// One field's payload, by wire type. No supported message has fixed-width fields, so their
/// values are skipped, not kept. Groups (3/4) are deprecated and never produced by Kubernetes,
/// so they are rejected instead of being skipped.
#[derive(Debug, Clone, Copy)]
enum WireValue<'a> {
    Varint(u64),
    Fixed64,
    Len(&'a [u8]),
    Fixed32,
}

impl WireValue<'_> {
    fn describe(&self) -> &'static str {
        match self {
            WireValue::Varint(_) => "varint (wire type 0)",
            WireValue::Fixed64 => "fixed64 (wire type 1)",
            WireValue::Len(_) => "length-delimited (wire type 2)",
            WireValue::Fixed32 => "fixed32 (wire type 5)",
        }
    }
}

/// A decoded field tag plus its value. Typed accessors check the wire type, because a field that
/// arrives with the wrong one means the body is not the message we think it is.
#[derive(Debug, Clone, Copy)]
struct Field<'a> {
    number: u32,
    value: WireValue<'a>,
}

impl<'a> Field<'a> {
    fn wrong_type(&self, name: &str, expected: &str) -> ProtoError {
        ProtoError::new(format!(
            "field {} ({name}): expected {expected}, got {}",
            self.number,
            self.value.describe()
        ))
    }

    fn bytes(&self, name: &str) -> Result<&'a [u8]> {
        match self.value {
            WireValue::Len(b) => Ok(b),
            _ => Err(self.wrong_type(name, "length-delimited (wire type 2)")),
        }
    }

    fn string(&self, name: &str) -> Result<String> {
        let bytes = self.bytes(name)?;
        utf8(bytes).map_err(|e| e.context(&format!("field {} ({name})", self.number)))
    }

    fn varint(&self, name: &str) -> Result<u64> {
        match self.value {
            WireValue::Varint(v) => Ok(v),
            _ => Err(self.wrong_type(name, "varint (wire type 0)")),
        }
    }

    fn bool(&self, name: &str) -> Result<bool> {
        Ok(self.varint(name)? != 0)
    }

    /// Protobuf int64 is the varint's bits reinterpreted as two's complement.
    fn int64(&self, name: &str) -> Result<i64> {
        Ok(self.varint(name)? as i64)
    }
}

/// Cursor over one message's bytes. `msg` names the message for error messages.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    msg: &'static str,
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8], msg: &'static str) -> Self {
        Reader { buf, pos: 0, msg }
    }

    fn error(&self, what: impl fmt::Display) -> ProtoError {
        ProtoError::new(format!(
            "{}: {what} (at byte {} of {})",
            self.msg,
            self.pos,
            self.buf.len()
        ))
    }

    /// Reads a base-128 varint of at most 10 bytes; the 10th byte may only carry bit 63.
    fn varint(&mut self) -> Result<u64> {
        let mut value = 0u64;
        for i in 0..10u32 {
            let Some(&byte) = self.buf.get(self.pos) else {
                return Err(self.error("truncated varint"));
            };
            if i == 9 && byte > 1 {
                return Err(self.error("varint overflows 64 bits"));
            }
            self.pos += 1;
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        // Unreachable in practice: the 10th byte either errors above or ends the varint.
        Err(self.error("varint longer than 10 bytes"))
    }

    fn take(&mut self, len: usize, what: &str) -> Result<&'a [u8]> {
        let remaining = self.buf.len() - self.pos;
        if len > remaining {
            return Err(self.error(format!(
                "{what} needs {len} bytes but only {remaining} remain"
            )));
        }
        let slice = &self.buf[self.pos..self.pos + len];
        self.pos += len;
        Ok(slice)
    }

    /// Reads the next field, or `None` at the end of the message. Reading a field consumes its
    /// payload, which is how unknown fields get skipped.
    fn next_field(&mut self) -> Result<Option<Field<'a>>> {
        if self.pos >= self.buf.len() {
            return Ok(None);
        }
        let key = self.varint()?;
        let number = key >> 3;
        if number == 0 || number > MAX_FIELD_NUMBER {
            return Err(self.error(format!("invalid field number {number}")));
        }
        let value = match key & 7 {
            0 => WireValue::Varint(self.varint()?),
            1 => {
                self.take(8, "fixed64 value")?;
                WireValue::Fixed64
            }
            2 => {
                let len = self.varint()?;
                let len = usize::try_from(len)
                    .map_err(|_| self.error(format!("length {len} does not fit in memory")))?;
                WireValue::Len(self.take(len, &format!("field {number}"))?)
            }
            3 | 4 => {
                return Err(self.error(format!(
                    "field {number} uses a group (wire type {}), which Kubernetes never sends",
                    key & 7
                )));
            }
            5 => {
                self.take(4, "fixed32 value")?;
                WireValue::Fixed32
            }
            other => return Err(self.error(format!("field {number}: invalid wire type {other}"))),
        };
        // `number` is at most 2^29 - 1, so it fits in u32.
        Ok(Some(Field {
            number: number as u32,
            value,
        }))
    }
}

/// Runs `each` for every field of `buf`, in wire order. Unknown fields are the caller's `_ => {}`.
fn for_each_field<'a>(
    buf: &'a [u8],
    msg: &'static str,
    mut each: impl FnMut(Field<'a>) -> Result<()>,
) -> Result<()> {
    let mut reader = Reader::new(buf, msg);
    while let Some(field) = reader.next_field()? {
        each(field).map_err(|e| e.context(msg))?;
    }
    Ok(())
}

fn utf8(bytes: &[u8]) -> Result<String> {
    String::from_utf8(bytes.to_vec())
        .map_err(|e| ProtoError::new(format!("string is not valid UTF-8: {}", e.utf8_error())))
}

fn hex(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "an empty body".into();
    }
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A `map<string, V>` entry: message `{1 key, 2 value}`. Either part may be missing on the wire
/// (gogo leaves out nil byte values), and then defaults to empty.
fn map_entry(buf: &[u8]) -> Result<(String, &[u8])> {
    let mut key = String::new();
    let mut value: &[u8] = &[];
    for_each_field(buf, "map entry", |f| {
        match f.number {
            1 => key = f.string("key")?,
            2 => value = f.bytes("value")?,
            _ => {}
        }
        Ok(())
    })?;
    Ok((key, value))
}

/// Inserts a `map<string,string>` entry as a JSON string.
fn insert_string_entry(map: &mut Map<String, Value>, field: &Field<'_>, name: &str) -> Result<()> {
    let (key, value) = map_entry(field.bytes(name)?).map_err(|e| e.context(name))?;
    let value = utf8(value).map_err(|e| e.context(&format!("{name}[{key:?}]")))?;
    map.insert(key, Value::String(value));
    Ok(())
}

/// Inserts a `map<string,bytes>` entry as standard base64, which is how JSON carries `[]byte`.
fn insert_bytes_entry(map: &mut Map<String, Value>, field: &Field<'_>, name: &str) -> Result<()> {
    let (key, value) = map_entry(field.bytes(name)?).map_err(|e| e.context(name))?;
    map.insert(key, Value::String(STANDARD.encode(value)));
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// runtime.Unknown envelope.

struct Unknown<'a> {
    api_version: String,
    kind: String,
    raw: Option<&'a [u8]>,
    content_encoding: String,
}

fn decode_unknown(buf: &[u8]) -> Result<Unknown<'_>> {
    let mut out = Unknown {
        api_version: String::new(),
        kind: String::new(),
        raw: None,
        content_encoding: String::new(),
    };
    for_each_field(buf, "runtime.Unknown", |f| {
        match f.number {
            1 => decode_type_meta(f.bytes("typeMeta")?, &mut out.api_version, &mut out.kind)
                .map_err(|e| e.context("typeMeta"))?,
            2 => out.raw = Some(f.bytes("raw")?),
            3 => out.content_encoding = f.string("contentEncoding")?,
            // 4 contentType is informational; the magic already told us it is protobuf.
            _ => {}
        }
        Ok(())
    })?;
    Ok(out)
}

fn decode_type_meta(buf: &[u8], api_version: &mut String, kind: &mut String) -> Result<()> {
    for_each_field(buf, "TypeMeta", |f| {
        match f.number {
            1 => *api_version = f.string("apiVersion")?,
            2 => *kind = f.string("kind")?,
            _ => {}
        }
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// Kinds.

/// `Secret{1 metadata, 2 map<string,bytes> data, 3 type, 4 map<string,string> stringData, 5 immutable}`.
fn decode_secret(buf: &[u8], object: &mut Map<String, Value>) -> Result<()> {
    let mut meta = ObjectMeta::default();
    let mut data = Map::new();
    let mut string_data = Map::new();
    let mut secret_type = String::new();
    let mut immutable = false;
    for_each_field(buf, "Secret", |f| {
        match f.number {
            1 => meta.merge_field(&f)?,
            2 => insert_bytes_entry(&mut data, &f, "data")?,
            3 => secret_type = f.string("type")?,
            4 => insert_string_entry(&mut string_data, &f, "stringData")?,
            5 => immutable = f.bool("immutable")?,
            _ => {}
        }
        Ok(())
    })?;
    object.insert("metadata".into(), meta.into_json());
    insert_non_empty_map(object, "data", data);
    insert_non_empty_map(object, "stringData", string_data);
    if !secret_type.is_empty() {
        object.insert("type".into(), Value::String(secret_type));
    }
    if immutable {
        object.insert("immutable".into(), Value::Bool(true));
    }
    Ok(())
}

/// `ConfigMap{1 metadata, 2 map<string,string> data, 3 map<string,bytes> binaryData, 4 immutable}`.
fn decode_config_map(buf: &[u8], object: &mut Map<String, Value>) -> Result<()> {
    let mut meta = ObjectMeta::default();
    let mut data = Map::new();
    let mut binary_data = Map::new();
    let mut immutable = false;
    for_each_field(buf, "ConfigMap", |f| {
        match f.number {
            1 => meta.merge_field(&f)?,
            2 => insert_string_entry(&mut data, &f, "data")?,
            3 => insert_bytes_entry(&mut binary_data, &f, "binaryData")?,
            4 => immutable = f.bool("immutable")?,
            _ => {}
        }
        Ok(())
    })?;
    object.insert("metadata".into(), meta.into_json());
    insert_non_empty_map(object, "data", data);
    insert_non_empty_map(object, "binaryData", binary_data);
    if immutable {
        object.insert("immutable".into(), Value::Bool(true));
    }
    Ok(())
}

/// `Namespace{1 metadata, 2 spec{1 repeated finalizers}, 3 status{1 phase, 2 conditions}}`.
///
/// `spec` and `status` are emitted (possibly as `{}`) when present on the wire, matching Go's
/// JSON, which never omits struct-valued fields.
fn decode_namespace(buf: &[u8], object: &mut Map<String, Value>) -> Result<()> {
    let mut meta = ObjectMeta::default();
    let mut spec: Option<Map<String, Value>> = None;
    let mut status: Option<Map<String, Value>> = None;
    for_each_field(buf, "Namespace", |f| {
        match f.number {
            1 => meta.merge_field(&f)?,
            2 => decode_namespace_spec(f.bytes("spec")?, spec.get_or_insert_with(Map::new))
                .map_err(|e| e.context("spec"))?,
            3 => decode_namespace_status(f.bytes("status")?, status.get_or_insert_with(Map::new))
                .map_err(|e| e.context("status"))?,
            _ => {}
        }
        Ok(())
    })?;
    object.insert("metadata".into(), meta.into_json());
    if let Some(spec) = spec {
        object.insert("spec".into(), Value::Object(spec));
    }
    if let Some(status) = status {
        object.insert("status".into(), Value::Object(status));
    }
    Ok(())
}

fn decode_namespace_spec(buf: &[u8], spec: &mut Map<String, Value>) -> Result<()> {
    let mut finalizers = Vec::new();
    for_each_field(buf, "NamespaceSpec", |f| {
        if f.number == 1 {
            finalizers.push(Value::String(f.string("finalizers")?));
        }
        Ok(())
    })?;
    if !finalizers.is_empty() {
        let existing = spec.remove("finalizers");
        let mut all = match existing {
            Some(Value::Array(items)) => items,
            _ => Vec::new(),
        };
        all.extend(finalizers);
        spec.insert("finalizers".into(), Value::Array(all));
    }
    Ok(())
}

/// Only `phase` is kept; conditions are server-owned and a client never sets them.
fn decode_namespace_status(buf: &[u8], status: &mut Map<String, Value>) -> Result<()> {
    for_each_field(buf, "NamespaceStatus", |f| {
        if f.number == 1 {
            set_or_clear_string(status, "phase", f.string("phase")?);
        }
        Ok(())
    })
}

fn insert_non_empty_map(object: &mut Map<String, Value>, key: &str, map: Map<String, Value>) {
    if !map.is_empty() {
        object.insert(key.into(), Value::Object(map));
    }
}

/// Last occurrence wins (protobuf semantics); empty means "absent" (JSON `omitempty`).
fn set_or_clear_string(map: &mut Map<String, Value>, key: &str, value: String) {
    if value.is_empty() {
        map.remove(key);
    } else {
        map.insert(key.into(), Value::String(value));
    }
}

// ---------------------------------------------------------------------------------------------
// ObjectMeta.

/// ObjectMeta being assembled. It is a builder rather than a one-shot function because protobuf
/// merges repeated occurrences of an embedded message, and maps/lists must accumulate across them.
#[derive(Default)]
struct ObjectMeta {
    /// Scalar fields, already in their JSON form.
    scalars: Map<String, Value>,
    labels: Map<String, Value>,
    annotations: Map<String, Value>,
    owner_references: Vec<Value>,
    finalizers: Vec<Value>,
}

impl ObjectMeta {
    fn merge(&mut self, buf: &[u8]) -> Result<()> {
        for_each_field(buf, "ObjectMeta", |f| self.field(f))
    }

    /// Field 1 of every top-level kind: merged, as protobuf merges a repeated message field.
    fn merge_field(&mut self, f: &Field<'_>) -> Result<()> {
        self.merge(f.bytes("metadata")?)
            .map_err(|e| e.context("metadata"))
    }

    fn field(&mut self, f: Field<'_>) -> Result<()> {
        let s = &mut self.scalars;
        match f.number {
            1 => set_or_clear_string(s, "name", f.string("name")?),
            2 => set_or_clear_string(s, "generateName", f.string("generateName")?),
            3 => set_or_clear_string(s, "namespace", f.string("namespace")?),
            4 => set_or_clear_string(s, "selfLink", f.string("selfLink")?),
            5 => set_or_clear_string(s, "uid", f.string("uid")?),
            6 => set_or_clear_string(s, "resourceVersion", f.string("resourceVersion")?),
            7 => match f.int64("generation")? {
                0 => {
                    s.remove("generation");
                }
                g => {
                    s.insert("generation".into(), Value::from(g));
                }
            },
            8 => set_time(s, "creationTimestamp", &f)?,
            9 => set_time(s, "deletionTimestamp", &f)?,
            // A pointer in Go: present means set, even when zero.
            10 => {
                let secs = f.int64("deletionGracePeriodSeconds")?;
                s.insert("deletionGracePeriodSeconds".into(), Value::from(secs));
            }
            11 => insert_string_entry(&mut self.labels, &f, "labels")?,
            12 => insert_string_entry(&mut self.annotations, &f, "annotations")?,
            13 => {
                let reference = decode_owner_reference(f.bytes("ownerReferences")?)
                    .map_err(|e| e.context("ownerReferences"))?;
                self.owner_references.push(reference);
            }
            14 => self.finalizers.push(Value::String(f.string("finalizers")?)),
            // 17 managedFields and anything newer: server-owned or irrelevant here.
            _ => {}
        }
        Ok(())
    }

    fn into_json(self) -> Value {
        let mut meta = self.scalars;
        insert_non_empty_map(&mut meta, "labels", self.labels);
        insert_non_empty_map(&mut meta, "annotations", self.annotations);
        if !self.owner_references.is_empty() {
            meta.insert(
                "ownerReferences".into(),
                Value::Array(self.owner_references),
            );
        }
        if !self.finalizers.is_empty() {
            meta.insert("finalizers".into(), Value::Array(self.finalizers));
        }
        Value::Object(meta)
    }
}

/// `OwnerReference{1 kind, 3 name, 4 uid, 5 apiVersion, 6 controller, 7 blockOwnerDeletion}`.
/// The four strings are always present in Go's JSON; the two bools are pointers.
fn decode_owner_reference(buf: &[u8]) -> Result<Value> {
    let mut out = Map::new();
    for key in ["apiVersion", "kind", "name", "uid"] {
        out.insert(key.into(), Value::String(String::new()));
    }
    for_each_field(buf, "OwnerReference", |f| {
        match f.number {
            1 => {
                out.insert("kind".into(), Value::String(f.string("kind")?));
            }
            3 => {
                out.insert("name".into(), Value::String(f.string("name")?));
            }
            4 => {
                out.insert("uid".into(), Value::String(f.string("uid")?));
            }
            5 => {
                out.insert("apiVersion".into(), Value::String(f.string("apiVersion")?));
            }
            6 => {
                out.insert("controller".into(), Value::Bool(f.bool("controller")?));
            }
            7 => {
                let block = f.bool("blockOwnerDeletion")?;
                out.insert("blockOwnerDeletion".into(), Value::Bool(block));
            }
            _ => {}
        }
        Ok(())
    })?;
    Ok(Value::Object(out))
}

// ---------------------------------------------------------------------------------------------
// Time.

/// Go's zero `time.Time` (0001-01-01T00:00:00Z) in Unix seconds; JSON renders it as null/absent.
const GO_ZERO_TIME_UNIX: i64 = -62_135_596_800;

fn set_time(meta: &mut Map<String, Value>, key: &str, f: &Field<'_>) -> Result<()> {
    match decode_time(f.bytes(key)?).map_err(|e| e.context(key))? {
        Some(text) => meta.insert(key.into(), Value::String(text)),
        None => meta.remove(key),
    };
    Ok(())
}

/// `Time{1 int64 seconds, 2 int32 nanos}` → RFC 3339 with whole seconds, or `None` for the zero
/// time. Like apimachinery's `Time.Unmarshal`: an empty message is the zero time, and nanos are
/// dropped because JSON clients only ever see seconds.
fn decode_time(buf: &[u8]) -> Result<Option<String>> {
    if buf.is_empty() {
        return Ok(None);
    }
    let mut seconds = 0i64;
    for_each_field(buf, "Time", |f| {
        if f.number == 1 {
            seconds = f.int64("seconds")?;
        }
        Ok(())
    })?;
    if seconds == GO_ZERO_TIME_UNIX {
        return Ok(None);
    }
    format_rfc3339(seconds).map(Some)
}

/// Formats Unix seconds as `YYYY-MM-DDTHH:MM:SSZ`, the shape of Go's `metav1.Time` JSON.
fn format_rfc3339(unix: i64) -> Result<String> {
    helmdeck_formats::time::unix_rfc3339(unix).ok_or_else(|| {
        ProtoError::new(format!(
            "timestamp {unix} seconds is outside the years 0000..=9999 that RFC 3339 can express"
        ))
    })
}

#[cfg(test)]
mod tests;
