//! LIST in pages, as the API server answers `limit` and `continue`: at most `limit` objects
//! in the store's key order (namespace, name), and an opaque token naming the list's
//! resourceVersion and the last key served, from which the next request goes on.

use std::collections::HashMap;
use std::ops::Bound;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

use super::{Inner, Key, Store, Stored};
use crate::api_error::ApiError;
use crate::resources::{self, ResourceId};
use crate::selector::Selector;

/// The token format the API server writes (`meta.k8s.io/v1`: `v`, `rv`, `start`).
const TOKEN_VERSION: &str = "meta.k8s.io/v1";

const EXPIRED: &str = "The provided continue parameter is too old to display a consistent list \
result. You can start a new list without the continue parameter, or use the continue token in \
this response to retrieve the remainder of the results. Continuing with the provided token \
results in an inconsistent list - objects that were created, modified, or deleted between the \
time the first chunk was returned and now may show up in the list.";

/// What a LIST request asks of paging.
#[derive(Debug, Default)]
pub struct Paging {
    /// At most this many items (`None`: all of them).
    pub limit: Option<usize>,
    /// The `continue` token as sent.
    pub token: Option<String>,
}

impl Paging {
    /// Reads `limit`, `continue`, `resourceVersion` and `resourceVersionMatch`.
    pub fn from_query(q: &HashMap<String, String>) -> Result<Self, ApiError> {
        let limit = match q.get("limit").map(String::as_str) {
            None | Some("") => None,
            Some(text) => {
                let n: i64 = text.parse().map_err(|_| {
                    ApiError::bad_request(format!("invalid limit {text:?}: not an integer"))
                })?;
                usize::try_from(n).ok().filter(|&n| n > 0)
            }
        };
        let token = q.get("continue").filter(|t| !t.is_empty()).cloned();
        // The API server answers these from its watch cache, which ignores `limit`: the
        // whole list in one body.
        let from_cache = q.get("resourceVersion").is_some_and(|rv| rv == "0")
            || q.get("resourceVersionMatch")
                .is_some_and(|m| m == "NotOlderThan");
        let limit = if from_cache && token.is_none() {
            None
        } else {
            limit
        };
        Ok(Paging { limit, token })
    }
}

/// One page of a LIST.
pub struct Page {
    pub items: Vec<Stored>,
    /// The list's resourceVersion: the first page's, on every page.
    pub rv: u64,
    /// The token for the next page; `None` on the last.
    pub next: Option<String>,
    /// How many objects follow this page, when known (not with selectors, as the API server).
    pub remaining: Option<usize>,
}

impl Page {
    /// The list metadata: resourceVersion, and `continue` and `remainingItemCount` when set.
    pub fn metadata(&self) -> Value {
        let mut meta = json!({"resourceVersion": self.rv.to_string()});
        if let Some(next) = &self.next {
            meta["continue"] = json!(next);
        }
        if let Some(n) = self.remaining {
            meta["remainingItemCount"] = json!(n);
        }
        meta
    }
}

/// The rv of a token that goes on from the newest state: what the API server hands out with
/// the 410 for an expired token (`handleCompactedErrorForPaging`), so a client that accepts an
/// inconsistent list can finish it.
const LATEST: i64 = -1;

fn encode_token(rv: i64, key: &Key, namespaced: bool) -> String {
    // As the API server's: the key after the last one served (the last key and a NUL).
    let start = if namespaced {
        format!("{}/{}\u{0}", key.0, key.1)
    } else {
        format!("{}\u{0}", key.1)
    };
    let json = json!({"v": TOKEN_VERSION, "rv": rv, "start": start});
    URL_SAFE_NO_PAD.encode(json.to_string())
}

fn invalid(why: &str) -> ApiError {
    ApiError::bad_request(format!(
        "invalid continue token: continue key is not valid: {why}"
    ))
}

/// The list rv ([`LATEST`] or positive) and the last key served that a token names.
fn decode_token(token: &str, namespaced: bool) -> Result<(i64, Key), ApiError> {
    let bytes = URL_SAFE_NO_PAD
        .decode(token.trim_end_matches('='))
        .map_err(|e| invalid(&e.to_string()))?;
    let doc: Value = serde_json::from_slice(&bytes).map_err(|e| invalid(&e.to_string()))?;
    if doc.get("v").and_then(Value::as_str) != Some(TOKEN_VERSION) {
        return Err(invalid("server does not recognize this encoded version"));
    }
    let rv = doc
        .get("rv")
        .and_then(Value::as_i64)
        .filter(|&rv| rv > 0 || rv == LATEST)
        .ok_or_else(|| invalid("incorrect encoded start resourceVersion"))?;
    let start = doc
        .get("start")
        .and_then(Value::as_str)
        .and_then(|s| s.strip_suffix('\u{0}'))
        .filter(|s| !s.is_empty())
        .ok_or_else(|| invalid("encoded start key empty"))?;
    let key = if namespaced {
        let (ns, name) = start
            .split_once('/')
            .ok_or_else(|| invalid("encoded start key has no namespace"))?;
        (ns.to_string(), name.to_string())
    } else {
        (String::new(), start.to_string())
    };
    Ok((rv, key))
}

impl Store {
    /// One page of the objects of a resource (in one namespace, or all) that the selectors
    /// match. Without a limit, all of them (and no token).
    pub fn list_page(
        &self,
        res: ResourceId,
        ns: Option<&str>,
        (labels, fields): (&Selector, &Selector),
        paging: &Paging,
    ) -> Result<Page, ApiError> {
        let namespaced = resources::get(res).namespaced;
        let inner = self.lock();
        let (rv, after) = match &paging.token {
            None => (inner.rv, None),
            Some(token) => {
                let (rv, key) = decode_token(token, namespaced)?;
                match u64::try_from(rv) {
                    // The fresh token of an expired list: on from the newest state.
                    Err(_) => (inner.rv, Some(key)),
                    Ok(rv) if expired(&inner, rv) => {
                        let mut gone = ApiError::gone(EXPIRED);
                        gone.list_continue = Some(encode_token(LATEST, &key, namespaced));
                        return Err(gone);
                    }
                    Ok(rv) => (rv, Some(key)),
                }
            }
        };
        // The API server serves every page from the first page's snapshot; the simulator
        // keeps no snapshots and serves the objects after the key as they are now. A client
        // that watches from the list's resourceVersion is then replayed what changed since,
        // so it converges on the same state.
        let scope = scope_after(&inner, res, ns, after.as_ref(), namespaced);
        let mut matching = scope.filter(|(_, s)| s.selected(labels, fields));
        let Some(limit) = paging.limit else {
            let items = matching.map(|(_, s)| s.clone()).collect();
            return Ok(Page {
                items,
                rv,
                next: None,
                remaining: None,
            });
        };
        let page: Vec<(&Key, &Stored)> = matching.by_ref().take(limit).collect();
        let last = page.last().map(|(k, _)| (*k).clone());
        let more = page.len() == limit && matching.next().is_some();
        let items = page.into_iter().map(|(_, s)| s.clone()).collect();
        let (next, remaining) = match last {
            Some(last) if more => {
                let remaining = (labels.is_empty() && fields.is_empty())
                    .then(|| scope_after(&inner, res, ns, Some(&last), namespaced).count());
                (Some(encode_token(rv as i64, &last, namespaced)), remaining)
            }
            _ => (None, None),
        };
        Ok(Page {
            items,
            rv,
            next,
            remaining,
        })
    }
}

/// Whether the watch log no longer holds every change after `rv` (as a watch from it).
fn expired(inner: &Inner, rv: u64) -> bool {
    if rv >= inner.rv {
        return false;
    }
    let oldest = inner.log.front().map_or(inner.rv + 1, |e| e.stored.rv);
    rv + 1 < oldest
}

/// The stored objects in scope (one namespace, or all) whose key follows `after`, in order.
fn scope_after<'i>(
    inner: &'i Inner,
    res: ResourceId,
    ns: Option<&'i str>,
    after: Option<&Key>,
    namespaced: bool,
) -> Box<dyn Iterator<Item = (&'i Key, &'i Stored)> + 'i> {
    let map = inner.map(res);
    let lower = match after {
        Some(key) => Bound::Excluded(key.clone()),
        None => Bound::Unbounded,
    };
    match ns {
        Some(ns) if namespaced => {
            let first = (ns.to_string(), String::new());
            let lower = match lower {
                Bound::Excluded(k) if k >= first => Bound::Excluded(k),
                _ => Bound::Included(first),
            };
            Box::new(
                map.range((lower, Bound::Unbounded))
                    .take_while(move |((n, _), _)| n == ns),
            )
        }
        _ => Box::new(map.range((lower, Bound::Unbounded))),
    }
}
