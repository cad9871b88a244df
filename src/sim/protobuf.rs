//! Decoder for Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`).
//!
//! Helm's release storage talks to the API server through a typed client-go clientset, and that
//! clientset sends Secret (and, with `HELM_DRIVER=configmap`, ConfigMap; with
//! `--create-namespace`, Namespace) POST/PUT bodies as protobuf. It does not fall back to JSON on
//! a 415, so the simulated API server has to understand these bodies. The store works on JSON,
//! so this module turns each body into the JSON object a JSON client would have sent.
//!
//! The parser is hand-written (no prost, no generated types): only three kinds are needed, and a
//! small parser makes it easy to guarantee that no input, however broken, can panic the server.
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
        _ => {
            return Err(ProtoError::new(format!(
                "unsupported protobuf object: apiVersion {:?} kind {:?} (only v1 Secret, ConfigMap and Namespace can be decoded)",
                unknown.api_version, unknown.kind
            )));
        }
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
            1 => meta
                .merge(f.bytes("metadata")?)
                .map_err(|e| e.context("metadata"))?,
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
            1 => meta
                .merge(f.bytes("metadata")?)
                .map_err(|e| e.context("metadata"))?,
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
            1 => meta
                .merge(f.bytes("metadata")?)
                .map_err(|e| e.context("metadata"))?,
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
/// RFC 3339 needs a four-digit year: 0000-01-01T00:00:00Z ..= 9999-12-31T23:59:59Z.
const MIN_RFC3339_UNIX: i64 = -62_167_219_200;
const MAX_RFC3339_UNIX: i64 = 253_402_300_799;

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
    if !(MIN_RFC3339_UNIX..=MAX_RFC3339_UNIX).contains(&unix) {
        return Err(ProtoError::new(format!(
            "timestamp {unix} seconds is outside the years 0000..=9999 that RFC 3339 can express"
        )));
    }
    let days = unix.div_euclid(86_400);
    let secs_of_day = unix.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    Ok(format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs_of_day / 3600,
        secs_of_day % 3600 / 60,
        secs_of_day % 60
    ))
}

/// Days since 1970-01-01 → proleptic Gregorian (year, month, day). Howard Hinnant's algorithm;
/// exact for the whole RFC 3339 range and needs no date library.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

// ---------------------------------------------------------------------------------------------
// Tests.

/// Minimal protobuf encoder, only for building test bodies.
#[cfg(test)]
mod enc {
    pub fn varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    pub fn tag(out: &mut Vec<u8>, field: u32, wire: u8) {
        varint(out, (u64::from(field) << 3) | u64::from(wire));
    }

    pub fn bytes(out: &mut Vec<u8>, field: u32, data: &[u8]) {
        tag(out, field, 2);
        varint(out, data.len() as u64);
        out.extend_from_slice(data);
    }

    pub fn string(out: &mut Vec<u8>, field: u32, s: &str) {
        bytes(out, field, s.as_bytes());
    }

    pub fn uint(out: &mut Vec<u8>, field: u32, v: u64) {
        tag(out, field, 0);
        varint(out, v);
    }

    pub fn fixed32(out: &mut Vec<u8>, field: u32, v: u32) {
        tag(out, field, 5);
        out.extend_from_slice(&v.to_le_bytes());
    }

    pub fn fixed64(out: &mut Vec<u8>, field: u32, v: u64) {
        tag(out, field, 1);
        out.extend_from_slice(&v.to_le_bytes());
    }

    pub fn map_entry(out: &mut Vec<u8>, field: u32, key: &str, value: &[u8]) {
        let mut entry = Vec::new();
        string(&mut entry, 1, key);
        bytes(&mut entry, 2, value);
        bytes(out, field, &entry);
    }

    pub fn time(out: &mut Vec<u8>, field: u32, seconds: i64, nanos: i32) {
        let mut t = Vec::new();
        uint(&mut t, 1, seconds as u64);
        uint(&mut t, 2, nanos as i64 as u64);
        bytes(out, field, &t);
    }

    /// `k8s\0` + runtime.Unknown{typeMeta, raw, contentEncoding "", contentType ""}, laid out
    /// the way client-go writes it (empty strings included).
    pub fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
        let mut type_meta = Vec::new();
        string(&mut type_meta, 1, api_version);
        string(&mut type_meta, 2, kind);
        let mut unknown = Vec::new();
        bytes(&mut unknown, 1, &type_meta);
        bytes(&mut unknown, 2, raw);
        string(&mut unknown, 3, "");
        string(&mut unknown, 4, "");
        let mut out = b"k8s\0".to_vec();
        out.extend_from_slice(&unknown);
        out
    }

    /// ObjectMeta with every string field written (empty ones too), as gogo-protobuf does.
    pub fn go_style_meta(name: &str, namespace: &str, labels: &[(&str, &str)]) -> Vec<u8> {
        let mut m = Vec::new();
        string(&mut m, 1, name);
        string(&mut m, 2, "");
        string(&mut m, 3, namespace);
        string(&mut m, 4, "");
        string(&mut m, 5, "");
        string(&mut m, 6, "");
        uint(&mut m, 7, 0);
        bytes(&mut m, 8, &[]); // zero creationTimestamp
        for (k, v) in labels {
            map_entry(&mut m, 11, k, v.as_bytes());
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::enc;
    use super::*;
    use serde_json::json;

    const RELEASE_PAYLOAD: &str = "H4sIAAAAAAACA6tWykvMTVWyUlBKSc3NV9JRAPOLCxKTwYKJBQXFIMGy1KLizPw8oJAhkJeZl5YPZFYrFZcklpQWQ3QX5ORXpqYo1dYCAJh9ZYNTAAAA";

    /// A Secret as Helm's secrets driver sends it, plus fields Helm does not set.
    fn helm_secret_body() -> Vec<u8> {
        let mut meta = enc::go_style_meta(
            "sh.helm.release.v1.demo.v1",
            "apps",
            &[
                ("owner", "helm"),
                ("name", "demo"),
                ("status", "deployed"),
                ("version", "1"),
            ],
        );
        enc::map_entry(&mut meta, 12, "note", "héllo".as_bytes());
        enc::map_entry(&mut meta, 11, "createdAt", b"1767261600");
        let mut secret = Vec::new();
        enc::bytes(&mut secret, 1, &meta);
        enc::map_entry(&mut secret, 2, "release", RELEASE_PAYLOAD.as_bytes());
        enc::map_entry(
            &mut secret,
            2,
            "blob",
            &[0x00, 0xff, 0xfe, 0x80, 0x1f, 0x8b],
        );
        enc::string(&mut secret, 3, "helm.sh/release.v1");
        enc::map_entry(&mut secret, 4, "plain", b"text");
        enc::uint(&mut secret, 5, 1);
        enc::envelope("v1", "Secret", &secret)
    }

    #[test]
    fn secret_round_trip_matches_json_client_shape() {
        let got = decode_object(&helm_secret_body()).expect("decodes");
        let want = json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {
                "name": "sh.helm.release.v1.demo.v1",
                "namespace": "apps",
                "labels": {"owner": "helm", "name": "demo", "status": "deployed",
                           "version": "1", "createdAt": "1767261600"},
                "annotations": {"note": "héllo"},
            },
            "data": {
                "release": STANDARD.encode(RELEASE_PAYLOAD),
                "blob": STANDARD.encode([0x00, 0xff, 0xfe, 0x80, 0x1f, 0x8b]),
            },
            "type": "helm.sh/release.v1",
            "stringData": {"plain": "text"},
            "immutable": true,
        });
        assert_eq!(got, want);
        // Non-UTF-8 bytes survive exactly.
        let blob = got["data"]["blob"].as_str().expect("string");
        assert_eq!(
            STANDARD.decode(blob).expect("base64"),
            [0x00, 0xff, 0xfe, 0x80, 0x1f, 0x8b]
        );
    }

    #[test]
    fn secret_without_optional_fields_has_only_metadata() {
        let mut secret = Vec::new();
        enc::bytes(&mut secret, 1, &enc::go_style_meta("s", "", &[]));
        enc::string(&mut secret, 3, "");
        let got = decode_object(&enc::envelope("v1", "Secret", &secret)).expect("decodes");
        assert_eq!(
            got,
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}})
        );
    }

    #[test]
    fn map_entry_without_value_is_empty() {
        let mut entry = Vec::new();
        enc::string(&mut entry, 1, "empty");
        let mut secret = Vec::new();
        enc::bytes(&mut secret, 2, &entry);
        let got = decode_object(&enc::envelope("v1", "Secret", &secret)).expect("decodes");
        assert_eq!(got["data"], json!({"empty": ""}));
        assert_eq!(got["metadata"], json!({}));
    }

    #[test]
    fn object_meta_full() {
        let mut owner = Vec::new();
        enc::string(&mut owner, 1, "ReplicaSet");
        enc::string(&mut owner, 3, "web-abc");
        enc::string(&mut owner, 4, "uid-1");
        enc::string(&mut owner, 5, "apps/v1");
        enc::uint(&mut owner, 6, 1);
        let mut meta = Vec::new();
        enc::string(&mut meta, 1, "x");
        enc::string(&mut meta, 2, "x-");
        enc::string(&mut meta, 4, "/api/v1/x");
        enc::string(&mut meta, 5, "u-1");
        enc::string(&mut meta, 6, "42");
        enc::uint(&mut meta, 7, 3);
        enc::time(&mut meta, 8, 1_767_261_600, 123_456);
        enc::time(&mut meta, 9, 0, 0);
        enc::uint(&mut meta, 10, (-5i64) as u64);
        enc::bytes(&mut meta, 13, &owner);
        enc::string(&mut meta, 14, "kubernetes.io/a");
        enc::string(&mut meta, 14, "kubernetes.io/b");
        enc::bytes(&mut meta, 17, b"\x0a\x03foo"); // managedFields: skipped
        let mut cm = Vec::new();
        enc::bytes(&mut cm, 1, &meta);
        let got = decode_object(&enc::envelope("v1", "ConfigMap", &cm)).expect("decodes");
        assert_eq!(
            got["metadata"],
            json!({
                "name": "x", "generateName": "x-", "selfLink": "/api/v1/x", "uid": "u-1",
                "resourceVersion": "42", "generation": 3,
                "creationTimestamp": "2026-01-01T10:00:00Z",
                "deletionTimestamp": "1970-01-01T00:00:00Z",
                "deletionGracePeriodSeconds": -5,
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                     "name": "web-abc", "uid": "uid-1", "controller": true}],
                "finalizers": ["kubernetes.io/a", "kubernetes.io/b"],
            })
        );
    }

    #[test]
    fn repeated_metadata_merges_like_protobuf() {
        let mut first = Vec::new();
        enc::string(&mut first, 1, "old");
        enc::map_entry(&mut first, 11, "a", b"1");
        let mut second = Vec::new();
        enc::string(&mut second, 1, "new");
        enc::map_entry(&mut second, 11, "b", b"2");
        let mut secret = Vec::new();
        enc::bytes(&mut secret, 1, &first);
        enc::bytes(&mut secret, 1, &second);
        let got = decode_object(&enc::envelope("v1", "Secret", &secret)).expect("decodes");
        assert_eq!(
            got["metadata"],
            json!({"name": "new", "labels": {"a": "1", "b": "2"}})
        );
    }

    #[test]
    fn config_map_decodes_data_and_binary_data() {
        let mut cm = Vec::new();
        enc::bytes(
            &mut cm,
            1,
            &enc::go_style_meta("sh.helm.release.v1.demo.v1", "apps", &[("owner", "helm")]),
        );
        enc::map_entry(&mut cm, 2, "release", RELEASE_PAYLOAD.as_bytes());
        enc::map_entry(&mut cm, 3, "bin", &[0xff, 0x00]);
        enc::uint(&mut cm, 4, 0);
        let got = decode_object(&enc::envelope("v1", "ConfigMap", &cm)).expect("decodes");
        assert_eq!(
            got,
            json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "sh.helm.release.v1.demo.v1", "namespace": "apps",
                             "labels": {"owner": "helm"}},
                "data": {"release": RELEASE_PAYLOAD},
                "binaryData": {"bin": "/wA="},
            })
        );
    }

    #[test]
    fn config_map_rejects_non_utf8_string_data() {
        let mut cm = Vec::new();
        enc::map_entry(&mut cm, 2, "k", &[0xc3, 0x28]);
        let err = decode_object(&enc::envelope("v1", "ConfigMap", &cm)).expect_err("bad UTF-8");
        assert!(err.0.contains("UTF-8"), "{err}");
        assert!(err.0.contains("ConfigMap"), "{err}");
    }

    #[test]
    fn namespace_decodes_spec_and_status() {
        let mut spec = Vec::new();
        enc::string(&mut spec, 1, "kubernetes");
        let mut status = Vec::new();
        enc::string(&mut status, 1, "");
        let mut ns = Vec::new();
        enc::bytes(
            &mut ns,
            1,
            &enc::go_style_meta("apps", "", &[("name", "apps")]),
        );
        enc::bytes(&mut ns, 2, &spec);
        enc::bytes(&mut ns, 3, &status);
        let got = decode_object(&enc::envelope("v1", "Namespace", &ns)).expect("decodes");
        assert_eq!(
            got,
            json!({
                "apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": "apps", "labels": {"name": "apps"}},
                "spec": {"finalizers": ["kubernetes"]},
                "status": {},
            })
        );
    }

    #[test]
    fn unknown_fields_of_every_wire_type_are_skipped() {
        fn junk(out: &mut Vec<u8>) {
            enc::uint(out, 900, u64::MAX);
            enc::fixed64(out, 901, 0x0102_0304_0506_0708);
            enc::bytes(out, 902, b"\xff\xff\xff not a message");
            enc::fixed32(out, 903, 7);
            enc::uint(out, (1 << 29) - 1, 1);
        }
        let mut entry = Vec::new();
        junk(&mut entry);
        enc::string(&mut entry, 1, "k");
        junk(&mut entry);
        enc::bytes(&mut entry, 2, b"v");
        let mut meta = Vec::new();
        junk(&mut meta);
        enc::string(&mut meta, 1, "n");
        enc::bytes(&mut meta, 11, &entry);
        junk(&mut meta);
        let mut secret = Vec::new();
        junk(&mut secret);
        enc::bytes(&mut secret, 1, &meta);
        enc::bytes(&mut secret, 2, &entry);
        junk(&mut secret);
        let mut type_meta = Vec::new();
        junk(&mut type_meta);
        enc::string(&mut type_meta, 1, "v1");
        enc::string(&mut type_meta, 2, "Secret");
        let mut unknown = Vec::new();
        junk(&mut unknown);
        enc::bytes(&mut unknown, 1, &type_meta);
        enc::bytes(&mut unknown, 2, &secret);
        enc::string(&mut unknown, 4, "application/vnd.kubernetes.protobuf");
        junk(&mut unknown);
        let mut body = b"k8s\0".to_vec();
        body.extend_from_slice(&unknown);
        let got = decode_object(&body).expect("decodes");
        assert_eq!(
            got,
            json!({"apiVersion": "v1", "kind": "Secret",
                   "metadata": {"name": "n", "labels": {"k": "v"}},
                   "data": {"k": "dg=="}})
        );
    }

    fn expect_error(body: &[u8], needle: &str) {
        match decode_object(body) {
            Ok(v) => panic!("expected error containing {needle:?}, got {v}"),
            Err(e) => assert!(
                e.0.contains(needle),
                "error {e:?} should contain {needle:?}"
            ),
        }
    }

    #[test]
    fn envelope_errors_are_clear() {
        expect_error(b"", "magic");
        expect_error(b"k8s", "magic");
        expect_error(b"{\"kind\":\"Secret\"}", "magic");
        expect_error(
            &enc::envelope("v1", "Pod", b""),
            "unsupported protobuf object",
        );
        expect_error(
            &enc::envelope("apps/v1", "Secret", b""),
            "unsupported protobuf object",
        );
        let mut no_raw = b"k8s\0".to_vec();
        let mut tm = Vec::new();
        enc::string(&mut tm, 1, "v1");
        enc::string(&mut tm, 2, "Secret");
        enc::bytes(&mut no_raw, 1, &tm);
        expect_error(&no_raw, "no raw object");
        let mut gz = no_raw.clone();
        enc::bytes(&mut gz, 2, b"");
        enc::string(&mut gz, 3, "gzip");
        expect_error(&gz, "contentEncoding");
    }

    #[test]
    fn wire_errors_are_clear() {
        let secret = |raw: &[u8]| enc::envelope("v1", "Secret", raw);
        expect_error(&secret(&[0x0a]), "truncated varint");
        expect_error(&secret(&[0x0a, 0x80]), "truncated varint");
        expect_error(
            &secret(&[0x0a, 0x05, 0x01]),
            "needs 5 bytes but only 1 remain",
        );
        expect_error(
            &secret(&[
                0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
            ]),
            "overflows",
        );
        expect_error(
            &secret(&[
                0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
            ]),
            "needs 18446744073709551615 bytes",
        );
        expect_error(&secret(&[0x0b]), "group");
        expect_error(&secret(&[0x0c]), "group");
        expect_error(&secret(&[0x0e]), "invalid wire type 6");
        expect_error(&secret(&[0x02, 0x00]), "invalid field number 0");
        expect_error(
            &secret(&[0x09, 1, 2, 3]),
            "fixed64 value needs 8 bytes but only 3 remain",
        );
        expect_error(&secret(&[0x0d, 1]), "fixed32 value needs 4 bytes");
        expect_error(
            &secret(&[0x09, 1, 2, 3, 4, 5, 6, 7, 8]),
            "field 1 (metadata): expected length-delimited (wire type 2), got fixed64",
        );
        expect_error(
            &secret(&[0x08, 0x01]),
            "field 1 (metadata): expected length-delimited",
        );
        expect_error(
            &secret(&[0x2a, 0x00]),
            "field 5 (immutable): expected varint",
        );
        let mut meta = Vec::new();
        enc::bytes(&mut meta, 1, &[0xff, 0xfe]);
        let mut raw = Vec::new();
        enc::bytes(&mut raw, 1, &meta);
        expect_error(
            &secret(&raw),
            "Secret: metadata: ObjectMeta: field 1 (name): string is not valid UTF-8",
        );
    }

    #[test]
    fn time_formatting() {
        assert_eq!(format_rfc3339(0).expect("ok"), "1970-01-01T00:00:00Z");
        assert_eq!(
            format_rfc3339(1_767_261_600).expect("ok"),
            "2026-01-01T10:00:00Z"
        );
        assert_eq!(
            format_rfc3339(1_709_208_000).expect("ok"),
            "2024-02-29T12:00:00Z"
        );
        assert_eq!(
            format_rfc3339(951_782_399).expect("ok"),
            "2000-02-28T23:59:59Z"
        );
        assert_eq!(format_rfc3339(-1).expect("ok"), "1969-12-31T23:59:59Z");
        assert_eq!(
            format_rfc3339(MIN_RFC3339_UNIX).expect("ok"),
            "0000-01-01T00:00:00Z"
        );
        assert_eq!(
            format_rfc3339(MAX_RFC3339_UNIX).expect("ok"),
            "9999-12-31T23:59:59Z"
        );
        assert_eq!(
            format_rfc3339(GO_ZERO_TIME_UNIX).expect("ok"),
            "0001-01-01T00:00:00Z"
        );
        assert!(format_rfc3339(MAX_RFC3339_UNIX + 1).is_err());
        assert!(format_rfc3339(i64::MIN).is_err());
        let mut t = Vec::new();
        enc::uint(&mut t, 1, GO_ZERO_TIME_UNIX as u64);
        assert_eq!(decode_time(&t).expect("ok"), None);
        assert_eq!(decode_time(&[]).expect("ok"), None);
        let mut meta = Vec::new();
        enc::time(&mut meta, 8, i64::MAX, 0);
        let mut raw = Vec::new();
        enc::bytes(&mut raw, 1, &meta);
        expect_error(
            &enc::envelope("v1", "Secret", &raw),
            "creationTimestamp: timestamp",
        );
    }

    /// Decoding must return (Ok or Err) and never panic; report the input if it does.
    fn assert_no_panic(body: &[u8]) {
        let result = std::panic::catch_unwind(|| {
            let _ = decode_object(body);
        });
        assert!(result.is_ok(), "decode_object panicked on {}", hex(body));
    }

    fn all_bodies() -> Vec<Vec<u8>> {
        let mut ns = Vec::new();
        enc::bytes(&mut ns, 1, &enc::go_style_meta("apps", "", &[("a", "b")]));
        enc::bytes(&mut ns, 2, b"\x0a\x01k");
        let mut cm = Vec::new();
        enc::bytes(&mut cm, 1, &enc::go_style_meta("c", "apps", &[]));
        enc::map_entry(&mut cm, 2, "k", b"v");
        enc::map_entry(&mut cm, 3, "b", b"\xff");
        vec![
            helm_secret_body(),
            enc::envelope("v1", "ConfigMap", &cm),
            enc::envelope("v1", "Namespace", &ns),
        ]
    }

    #[test]
    fn every_truncation_is_handled() {
        for body in all_bodies() {
            for len in 0..body.len() {
                assert_no_panic(&body[..len]);
            }
            assert!(decode_object(&body).is_ok());
        }
    }

    #[test]
    fn random_mutations_never_panic() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let bodies = all_bodies();
        for round in 0..600 {
            let mut body = bodies[round % bodies.len()].clone();
            let edits = 1 + next() % 4;
            for _ in 0..edits {
                // Keep the magic intact most of the time so the deeper parsers get exercised.
                let lo = if next() % 8 == 0 { 0 } else { 4 };
                let span = (body.len() - lo).max(1) as u64;
                let at = (lo + (next() % span) as usize).min(body.len());
                let byte = next() as u8;
                match next() % 4 {
                    0 if at < body.len() => body[at] = byte,
                    1 if at < body.len() => body[at] ^= 1 << (byte % 8),
                    2 => body.insert(at, byte),
                    _ if at < body.len() => {
                        body.remove(at);
                    }
                    _ => body.push(byte),
                }
            }
            assert_no_panic(&body);
        }
    }
}
