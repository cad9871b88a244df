//! The release-record decoder (crates/helmdeck-formats/src/release.rs): base64 → gzip → JSON, from a Secret or a
//! ConfigMap. Any input gives a JSON object or an error, never a panic; what the encoder writes
//! decodes to the same value.

use std::io::Write;

use base64::{Engine as _, engine::general_purpose::STANDARD};
use flate2::{Compression, write::GzEncoder};
use helmdeck::helm::release::{
    decode_release_configmap, decode_release_payload, decode_release_secret,
    encode_release_payload, release_secret,
};
use helmdeck::helm::status::from_release_json;
use proptest::collection::vec;
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::fuzz;
use crate::inputs::{Edit, apply, edits, hostile_text, json_object_of, json_value};
use crate::records::{self, text_at};

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
    // Writing into a Vec cannot fail.
    gz.write_all(data).expect("gzip into a Vec");
    gz.finish().expect("gzip into a Vec")
}

/// A decoded record is a JSON object, or the decode failed.
fn assert_object(result: &Result<Value, impl std::fmt::Display>) -> Result<(), TestCaseError> {
    if let Ok(v) = result {
        prop_assert!(v.is_object(), "decoded to a non-object: {}", v);
    }
    if let Err(e) = result {
        prop_assert!(!e.to_string().is_empty(), "an error without a message");
    }
    Ok(())
}

/// Inner payloads from every layer's point of view: not base64, base64 of junk, gzip magic
/// followed by junk, gzip of junk, gzip of JSON that is not a release, plain JSON.
fn payload() -> impl Strategy<Value = Vec<u8>> {
    let magic = [0x1f, 0x8b, 0x08];
    prop_oneof![
        vec(any::<u8>(), 0..128),
        hostile_text().prop_map(String::into_bytes),
        vec(any::<u8>(), 0..128).prop_map(|b| STANDARD.encode(b).into_bytes()),
        vec(any::<u8>(), 0..128).prop_map(move |b| {
            let mut bytes = magic.to_vec();
            bytes.extend(b);
            STANDARD.encode(bytes).into_bytes()
        }),
        vec(any::<u8>(), 0..128).prop_map(|b| STANDARD.encode(gzip(&b)).into_bytes()),
        json_value().prop_map(|v| STANDARD.encode(gzip(v.to_string().as_bytes())).into_bytes()),
        json_value().prop_map(|v| STANDARD.encode(v.to_string()).into_bytes()),
    ]
}

#[test]
#[ignore = "fuzz target: scripts/fuzz.sh"]
fn release_payload_any_bytes() {
    fuzz("release_payload_any_bytes", payload, |bytes| {
        let decoded = decode_release_payload(&bytes);
        assert_object(&decoded)?;
        if let Ok(v) = decoded {
            // Whatever decodes must be safe to read too.
            let _ = from_release_json(&v);
        }
        Ok(())
    });
}

#[test]
#[ignore = "fuzz target: scripts/fuzz.sh"]
fn release_record_round_trip() {
    let release = || {
        prop_oneof![
            records::release().prop_map(|(v, _)| v),
            json_object_of(json_value()),
        ]
    };
    fuzz(
        "release_record_round_trip",
        || (release(), any::<i64>()),
        |(release, created)| {
            let payload = encode_release_payload(&release);
            prop_assert_eq!(
                decode_release_payload(payload.as_bytes()).ok(),
                Some(release.clone())
            );
            let cm = json!({"data": {"release": payload}});
            prop_assert_eq!(decode_release_configmap(&cm).ok(), Some(release.clone()));

            let secret = release_secret(&release, created);
            prop_assert_eq!(decode_release_secret(&secret).ok(), Some(release.clone()));
            prop_assert_eq!(
                text_at(&secret, "/metadata/labels/name"),
                text_at(&release, "/name")
            );
            prop_assert_eq!(
                text_at(&secret, "/metadata/labels/createdAt"),
                created.to_string()
            );
            Ok(())
        },
    );
}

/// Where an edit lands: the Secret's outer base64, the payload's base64, the gzip stream or
/// the JSON text.
#[derive(Debug, Clone, Copy)]
enum Layer {
    Outer,
    Payload,
    Gzip,
    Json,
}

#[test]
#[ignore = "fuzz target: scripts/fuzz.sh"]
fn release_record_corrupted() {
    let layer = || {
        prop_oneof![
            Just(Layer::Outer),
            Just(Layer::Payload),
            Just(Layer::Gzip),
            Just(Layer::Json),
        ]
    };
    fuzz(
        "release_record_corrupted",
        || (records::release(), layer(), edits()),
        |((release, _), layer, edits): (records::Typed, Layer, Vec<Edit>)| {
            let json = release.to_string().into_bytes();
            let payload = match layer {
                Layer::Json => STANDARD.encode(gzip(&apply(json, &edits))).into_bytes(),
                Layer::Gzip => STANDARD.encode(apply(gzip(&json), &edits)).into_bytes(),
                Layer::Payload | Layer::Outer => encode_release_payload(&release).into_bytes(),
            };
            let payload = match layer {
                Layer::Payload => apply(payload, &edits),
                _ => payload,
            };
            let decoded = decode_release_payload(&payload);
            assert_object(&decoded)?;
            let mut outer = STANDARD.encode(&payload).into_bytes();
            if let Layer::Outer = layer {
                outer = apply(outer, &edits);
            }
            let secret = json!({"data": {"release": String::from_utf8_lossy(&outer)}});
            assert_object(&decode_release_secret(&secret))?;
            if let Ok(v) = decoded {
                let _ = from_release_json(&v);
            }
            Ok(())
        },
    );
}

#[test]
#[ignore = "fuzz target: scripts/fuzz.sh"]
fn release_storage_object_any_shape() {
    let object = || {
        prop_oneof![
            json_value(),
            json_value().prop_map(|v| json!({"data": v})),
            json_value().prop_map(|v| json!({"data": {"release": v}})),
        ]
    };
    fuzz("release_storage_object_any_shape", object, |object| {
        let secret = decode_release_secret(&object);
        let cm = decode_release_configmap(&object);
        assert_object(&secret)?;
        assert_object(&cm)?;
        if object
            .pointer("/data/release")
            .and_then(Value::as_str)
            .is_none()
        {
            prop_assert!(
                secret.is_err() && cm.is_err(),
                "no data.release, yet decoded"
            );
        }
        Ok(())
    });
}
