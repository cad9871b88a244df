//! The HTTP front of the simulated API server: routing, content types, verbs, faults.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use color_eyre::eyre::{Result, WrapErr};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;

use super::api_error::{Access, ApiError};
use super::faults::{Delivered, Faults, Served, WatchKey};
use super::resources::{self, ResourceId, ids};
use super::selector::Selector;
use super::store::{Page, Paging, Part, PatchKind, Stored, WriteOpts};
use super::{SimState, Store, crd, discovery, logs_http, protobuf, scale, table, validate, watch};

pub use super::body::{Body, full};

/// Largest request body accepted (a release Secret with a big chart fits easily).
const MAX_BODY: usize = 32 * 1024 * 1024;

/// Request counters, served at `/_sim/stats` so tests can prove what reached the server.
#[derive(Default)]
pub struct Stats {
    pub requests: AtomicU64,
    /// Writes that may persist: POST, PUT, PATCH and DELETE without `dryRun`.
    pub writes: AtomicU64,
    /// Writes with `dryRun` set: validated and answered, never stored (a bad `dryRun` value is
    /// refused, so stores nothing either). Counted apart, and under `VERB dryRun` in `byVerb`.
    pub dry_run_writes: AtomicU64,
    pub watches: AtomicU64,
    /// Requests for `/openapi/v2`: clients fall back to it (protobuf only) when the v3
    /// documents do not let them leave validation to the server, so any is a regression.
    pub openapi_v2: AtomicU64,
    by_verb: std::sync::Mutex<HashMap<String, u64>>,
    recent: std::sync::Mutex<std::collections::VecDeque<String>>,
}

impl Stats {
    fn record(&self, method: &Method, path: &str, uri: &str, verb: &str, dry_run: bool) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        if path.starts_with("/openapi/v2") {
            self.openapi_v2.fetch_add(1, Ordering::Relaxed);
        }
        let write = matches!(
            *method,
            Method::POST | Method::PUT | Method::PATCH | Method::DELETE
        );
        let verb = match (write, dry_run) {
            (true, true) => {
                self.dry_run_writes.fetch_add(1, Ordering::Relaxed);
                format!("{verb} dryRun")
            }
            (true, false) => {
                self.writes.fetch_add(1, Ordering::Relaxed);
                verb.to_string()
            }
            (false, _) => verb.to_string(),
        };
        *self
            .by_verb
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(verb)
            .or_default() += 1;
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        if recent.len() >= 2000 {
            recent.pop_front();
        }
        recent.push_back(format!("{method} {uri}"));
    }

    pub fn to_json(&self) -> Value {
        json!({
            "requests": self.requests.load(Ordering::Relaxed),
            "writes": self.writes.load(Ordering::Relaxed),
            "dryRunWrites": self.dry_run_writes.load(Ordering::Relaxed),
            "watches": self.watches.load(Ordering::Relaxed),
            "openapiV2": self.openapi_v2.load(Ordering::Relaxed),
            "byVerb": *self.by_verb.lock().unwrap_or_else(|e| e.into_inner()),
        })
    }

    fn recent(&self) -> String {
        let recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        recent.iter().map(|l| format!("{l}\n")).collect()
    }
}

pub struct Server {
    pub sim: Arc<SimState>,
    pub faults: Arc<Faults>,
    pub stats: Stats,
}

pub fn json_response(code: u16, value: &Value) -> Response<Body> {
    let body = serde_json::to_vec(value).unwrap_or_else(|_| b"{}".to_vec());
    Response::builder()
        .status(code)
        .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
        .body(full(body))
        .expect("static response parts are valid")
}

pub fn error_response(err: &ApiError) -> Response<Body> {
    json_response(err.code, &err.to_status())
}

fn text_response(code: u16, text: impl Into<Bytes>) -> Response<Body> {
    Response::builder()
        .status(code)
        .header(CONTENT_TYPE, HeaderValue::from_static("text/plain"))
        .body(full(text))
        .expect("static response parts are valid")
}

/// A parsed resource URL.
#[derive(Debug, PartialEq)]
pub struct Route {
    pub resource: ResourceId,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub subresource: Option<String>,
}

/// Parses `/api/v1/...` and `/apis/G/V/...` resource paths (kinds the store serves only).
pub fn parse_route(store: &Store, path: &str) -> Option<Route> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match segs.as_slice() {
        ["api", v, rest @ ..] => ("", *v, rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return None,
    };
    let by = |plural: &str| store.resolve_path(group, version, plural);
    let route = |res, ns: Option<&str>, name: Option<&&str>, sub: Option<&&str>| Route {
        resource: res,
        namespace: ns.map(String::from),
        name: name.map(|s| s.to_string()),
        subresource: sub.map(|s| s.to_string()),
    };
    match rest {
        // Namespaced collection or item: namespaces/NS/PLURAL[/NAME[/SUB]]
        ["namespaces", ns, plural, tail @ ..]
            if tail.len() <= 2 && !matches!(*plural, "status" | "finalize") =>
        {
            let res = by(plural).filter(|r| resources::get(*r).namespaced)?;
            Some(route(res, Some(ns), tail.first(), tail.get(1)))
        }
        // Cluster-scoped: PLURAL[/NAME[/SUB]] (namespaces themselves included)
        [plural, tail @ ..] if tail.len() <= 2 => {
            let res = by(plural)?;
            Some(route(res, None, tail.first(), tail.get(1)))
        }
        _ => None,
    }
}

fn query_map(query: Option<&str>) -> HashMap<String, String> {
    form_urlencoded::parse(query.unwrap_or("").as_bytes())
        .into_owned()
        .collect()
}

fn flag(q: &HashMap<String, String>, key: &str) -> bool {
    matches!(q.get(key).map(String::as_str), Some("true" | "1"))
}

/// Label + field selectors from the query; a bad selector is a 400.
pub fn selectors(q: &HashMap<String, String>) -> Result<(Selector, Selector), ApiError> {
    let labels = Selector::parse_labels(q.get("labelSelector").map_or("", String::as_str))
        .map_err(ApiError::bad_request)?;
    let fields = Selector::parse_fields(q.get("fieldSelector").map_or("", String::as_str))
        .map_err(ApiError::bad_request)?;
    Ok((labels, fields))
}

fn decode_body(content_type: &str, bytes: &[u8]) -> Result<Value, ApiError> {
    let ct = content_type.split(';').next().unwrap_or("").trim();
    if ct == "application/vnd.kubernetes.protobuf" {
        return protobuf::decode_object(bytes).map_err(|e| {
            if e.0.contains("unsupported") {
                // Kinds without a protobuf decoding: the API server's 415 for them (a custom
                // resource's) lists only the formats it takes.
                ApiError::unsupported_patch("application/json, application/yaml")
            } else {
                ApiError::bad_request(format!(
                    "the body of the request could not be decoded as protobuf: {e}"
                ))
            }
        });
    }
    if bytes.is_empty() {
        return Ok(Value::Null);
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(v) => Ok(v),
        Err(json_err) if ct.ends_with("yaml") => {
            let text = std::str::from_utf8(bytes)
                .map_err(|_| ApiError::bad_request("the YAML body is not UTF-8"))?;
            serde_saphyr::from_str::<Value>(text).map_err(|e| {
                ApiError::bad_request(format!("error decoding YAML: {e} (as JSON: {json_err})"))
            })
        }
        Err(e) => Err(ApiError::bad_request(format!(
            "couldn't get version/kind; json parse error: {e}"
        ))),
    }
}

fn patch_kind(content_type: &str) -> Option<PatchKind> {
    match content_type.split(';').next().unwrap_or("").trim() {
        "application/apply-patch+yaml" | "application/apply-patch+cbor" => Some(PatchKind::Apply),
        "application/merge-patch+json" => Some(PatchKind::Merge),
        "application/strategic-merge-patch+json" => Some(PatchKind::Strategic),
        "application/json-patch+json" => Some(PatchKind::Json),
        _ => None,
    }
}

/// `dryRun=All` (the only value the API server accepts) makes a write validate and answer
/// without storing anything.
fn dry_run(q: &HashMap<String, String>) -> Result<bool, ApiError> {
    match q.get("dryRun").map(String::as_str) {
        None | Some("") => Ok(false),
        Some("All") => Ok(true),
        Some(other) => Err(ApiError::bad_request(format!(
            "Invalid dry run value: {other}: supported values: \"All\""
        ))),
    }
}

impl Server {
    /// The checks every written body gets: `apiVersion`/`kind` match the URL, and with
    /// `fieldValidation=Strict` no field the kind's schema leaves out.
    fn check_body(&self, res: ResourceId, body: &Value, strict: bool) -> Result<(), ApiError> {
        let rt = resources::get(res);
        validate::type_meta(&rt.api_version(), rt.kind, body).map_err(ApiError::bad_request)?;
        if strict {
            self.check_fields(res, body)?;
        }
        Ok(())
    }

    /// Strict field validation where a schema exists (a CRD's); built-ins stay lenient.
    fn check_fields(&self, res: ResourceId, body: &Value) -> Result<(), ApiError> {
        let Some(schema) = self.sim.store.schema(res) else {
            return Ok(());
        };
        let unknown = crd::unknown_fields(&schema, body);
        if unknown.is_empty() {
            return Ok(());
        }
        let fields: Vec<String> = unknown
            .iter()
            .map(|f| format!("unknown field \"{}\"", f.trim_start_matches('.')))
            .collect();
        Err(ApiError::bad_request(format!(
            "strict decoding error: {}",
            fields.join(", ")
        )))
    }

    pub fn new(sim: Arc<SimState>) -> Arc<Self> {
        let faults = Faults::new(&sim.scenario);
        Arc::new(Server {
            sim,
            faults,
            stats: Stats::default(),
        })
    }

    /// Accepts connections until the listener fails. Loopback only is enforced by the caller.
    pub async fn serve(self: Arc<Self>, listener: TcpListener) -> Result<()> {
        loop {
            let (stream, peer) = listener.accept().await.wrap_err("accepting a connection")?;
            if self.faults.refusing() {
                drop(stream);
                continue;
            }
            let server = self.clone();
            tokio::spawn(async move {
                let svc = service_fn(move |req| {
                    let server = server.clone();
                    async move { Ok::<_, Infallible>(server.handle(req, peer).await) }
                });
                // Errors here are client disconnects mid-request; nothing to report.
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    }

    async fn handle(self: Arc<Self>, req: Request<Incoming>, _peer: SocketAddr) -> Response<Body> {
        let method = req.method().clone();
        let uri = req.uri().to_string();
        let path = req.uri().path().to_string();
        let query = query_map(req.uri().query());
        let is_watch = flag(&query, "watch");
        let verb = match (&method, is_watch) {
            (&Method::GET, true) => "WATCH",
            (m, _) => m.as_str(),
        };
        // Any `dryRun` value stores nothing: `All` validates only, another is refused.
        let dry = query.get("dryRun").is_some_and(|v| !v.is_empty());
        self.stats.record(&method, &path, &uri, verb, dry);

        if path.starts_with("/_sim/") {
            return self.sim_endpoint(&path);
        }
        if let Some(delay) = self.faults.latency() {
            tokio::time::sleep(delay).await;
        }
        let key = collection_key(&self.sim.store, &req, &path, &query);
        if self.faults.erroring() {
            if let Some(key) = &key {
                self.faults.delivered(key, Delivered::Error500);
            }
            return error_response(&ApiError::internal(
                "simulated fault: the server is failing requests",
            ));
        }
        match self.route(req, &method, &path, &query, is_watch, key).await {
            Ok(resp) => resp,
            Err(e) => error_response(&e),
        }
    }

    fn sim_endpoint(&self, path: &str) -> Response<Body> {
        match path {
            "/_sim/stats" => {
                let mut stats = self.stats.to_json();
                stats["watchFaults"] = self.faults.tallies_json();
                stats["objects"] = Value::Object(self.sim.store.counts());
                stats["resourceVersion"] = json!(self.sim.store.current_rv());
                json_response(200, &stats)
            }
            "/_sim/requests" => text_response(200, self.stats.recent()),
            _ => text_response(404, "unknown simulator endpoint\n"),
        }
    }

    /// The router: discovery documents first, then a resource path parsed into a [`Call`]
    /// and dispatched by verb, name and subresource to one handler per operation.
    async fn route(
        &self,
        req: Request<Incoming>,
        method: &Method,
        path: &str,
        query: &HashMap<String, String>,
        is_watch: bool,
        key: Option<WatchKey>,
    ) -> Result<Response<Body>, ApiError> {
        if method == Method::GET
            && let Some(resp) = self.discovery(path)?
        {
            return Ok(resp);
        }
        let route = parse_route(&self.sim.store, path).ok_or_else(not_found)?;
        let rt = resources::get(route.resource);
        if rt.namespaced && route.namespace.is_none() && route.name.is_some() {
            return Err(not_found());
        }
        if let Some(sub) = &route.subresource
            && !rt.subresources.contains(&sub.as_str())
        {
            return Err(not_found());
        }
        let c = Call::of(&req, &route, query)?;
        self.authorize(method, &route, is_watch)?;
        match (method, route.name.as_deref(), c.subresource) {
            (&Method::GET, None, None) if is_watch => self.watch(&c, key),
            (&Method::GET, None, None) => self.list(&c, key.as_ref()),
            (_, Some(name), Some("scale")) => self.scale(req, method, &c, name).await,
            (&Method::GET, Some(name), Some("log")) => {
                logs_http::serve(&self.sim, c.ns.unwrap_or(""), name, query)
            }
            (&Method::GET, Some(name), _) => self.get_one(&c, name),
            (&Method::POST, None, None) => self.create(req, &c).await,
            (&Method::PUT, Some(name), None | Some("status")) => self.replace(req, &c, name).await,
            (&Method::PATCH, Some(name), None | Some("status")) => self.patch(req, &c, name).await,
            (&Method::DELETE, Some(name), None) => self.delete_one(&c, name),
            (&Method::DELETE, None, None) => self.delete_collection(&c),
            _ => Err(ApiError::method_not_allowed(format!(
                "the server does not allow this method on the requested resource ({method} {path})"
            ))),
        }
    }

    /// RBAC as a `forbidden` fault in force says: the 403 the API server answers a request
    /// its user may not make.
    fn authorize(&self, method: &Method, route: &Route, is_watch: bool) -> Result<(), ApiError> {
        let named = route.name.is_some();
        let verb = match *method {
            Method::GET if named => "get",
            Method::GET if is_watch => "watch",
            Method::GET => "list",
            Method::POST => "create",
            Method::PUT => "update",
            Method::PATCH => "patch",
            Method::DELETE if named => "delete",
            Method::DELETE => "deletecollection",
            _ => return Ok(()),
        };
        let rt = resources::get(route.resource);
        let access = Access {
            verb,
            resource: rt.plural,
            subresource: route.subresource.as_deref(),
            group: rt.group,
            namespace: route.namespace.as_deref(),
            name: route.name.as_deref(),
        };
        match self.faults.forbidden(&access) {
            Some(denied) => Err(denied),
            None => Ok(()),
        }
    }

    /// A GET of a discovery, OpenAPI or health path: its response, `None` for any other path
    /// (a resource path), or NotFound for an unknown group-version.
    fn discovery(&self, path: &str) -> Result<Option<Response<Body>>, ApiError> {
        let doc = match path.trim_end_matches('/') {
            "/version" => Some(discovery::version()),
            "/api" => Some(discovery::core_versions()),
            "/apis" => Some(discovery::group_list(&self.sim.store)),
            "/api/v1" => discovery::resource_list(&self.sim.store, "", "v1"),
            "/openapi/v3" => Some(discovery::openapi_root(&self.sim.store)),
            "/healthz" | "/livez" | "/readyz" => return Ok(Some(text_response(200, "ok"))),
            p => {
                if let Some(gv) = p.strip_prefix("/openapi/v3/") {
                    Some(
                        discovery::openapi_group_version(&self.sim.store, gv)
                            .ok_or_else(not_found)?,
                    )
                } else if let ["apis", g, v] =
                    p.trim_matches('/').split('/').collect::<Vec<_>>()[..]
                {
                    Some(discovery::resource_list(&self.sim.store, g, v).ok_or_else(not_found)?)
                } else {
                    None
                }
            }
        };
        Ok(doc.map(|doc| json_response(200, &doc)))
    }

    /// `GET …?watch=true` on a collection: the event stream.
    fn watch(&self, c: &Call<'_>, key: Option<WatchKey>) -> Result<Response<Body>, ApiError> {
        self.stats.watches.fetch_add(1, Ordering::Relaxed);
        let (labels, fields) = selectors(c.query)?;
        Ok(watch::serve(
            &self.sim,
            &self.faults,
            c.resource,
            c.ns,
            labels,
            fields,
            c.query,
            key.unwrap_or_default(),
        ))
    }

    /// `GET` on a collection: the objects matching the selectors, as a list or a Table.
    fn list(&self, c: &Call<'_>, key: Option<&WatchKey>) -> Result<Response<Body>, ApiError> {
        let (labels, fields) = selectors(c.query)?;
        let paging = Paging::from_query(c.query)?;
        let page = self
            .sim
            .store
            .list_page(c.resource, c.ns, (&labels, &fields), &paging)?;
        if let Some(key) = key {
            self.faults.served(key, Served::List);
        }
        if c.as_metadata {
            let items: Vec<Value> = page
                .items
                .iter()
                .map(|o| partial_metadata(&o.value()))
                .collect();
            let doc = json!({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
                "metadata": page.metadata(), "items": items});
            return Ok(json_response(200, &doc));
        }
        if c.as_table {
            let parsed: Vec<Value> = page.items.iter().map(Stored::value).collect();
            let refs: Vec<&Value> = parsed.iter().collect();
            let mut doc = table::table(c.resource, &refs, page.rv);
            doc["metadata"] = page.metadata();
            return Ok(json_response(200, &doc));
        }
        Ok(list_response(c.resource, &page))
    }

    /// `GET …/NAME` (or a subresource of it that is the object itself, e.g. status).
    fn get_one(&self, c: &Call<'_>, name: &str) -> Result<Response<Body>, ApiError> {
        let store = &self.sim.store;
        let obj = store.get(c.resource, c.ns, name)?;
        if c.as_table && c.subresource.is_none() {
            return Ok(json_response(
                200,
                &table::table(c.resource, &[&*obj], store.current_rv()),
            ));
        }
        if c.as_metadata && c.subresource.is_none() {
            return Ok(json_response(200, &partial_metadata(&obj)));
        }
        Ok(json_response(200, &obj))
    }

    /// `POST` on a collection: a new object (201).
    async fn create(
        &self,
        req: Request<Incoming>,
        c: &Call<'_>,
    ) -> Result<Response<Body>, ApiError> {
        let body = read_body(req, &c.content_type).await?;
        self.check_body(c.resource, &body, c.strict)?;
        let created = self
            .sim
            .store
            .create_opt(c.resource, c.ns, body, c.write_opts())?;
        if !c.dry_run {
            self.faults.note_write(c.kind);
        }
        Ok(json_response(201, &created))
    }

    /// `PUT …/NAME` or `…/NAME/status`: the object (or its status) replaced.
    async fn replace(
        &self,
        req: Request<Incoming>,
        c: &Call<'_>,
        name: &str,
    ) -> Result<Response<Body>, ApiError> {
        let body = read_body(req, &c.content_type).await?;
        self.check_body(c.resource, &body, c.strict)?;
        let store = &self.sim.store;
        Ok(json_response(
            200,
            &*store.replace_opt(c.resource, c.ns, name, body, c.part, c.write_opts())?,
        ))
    }

    /// `PATCH …/NAME` or `…/NAME/status` in the content type's patch kind; a server-side
    /// apply may create the object (201).
    async fn patch(
        &self,
        req: Request<Incoming>,
        c: &Call<'_>,
        name: &str,
    ) -> Result<Response<Body>, ApiError> {
        let content_type = c.content_type.as_str();
        let kind = patch_kind(content_type)
            .ok_or_else(|| ApiError::unsupported_media_type(content_type))?;
        if kind == PatchKind::Strategic && resources::is_custom(c.resource) {
            // Custom resources have no patch strategy to merge by.
            return Err(ApiError::unsupported_patch(
                "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
            ));
        }
        let body = read_body(req, content_type).await?;
        if kind == PatchKind::Apply {
            if c.field_manager.is_none() {
                return Err(ApiError::unprocessable(
                    "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
                        .into(),
                ));
            }
            self.check_body(c.resource, &body, c.strict)?;
        } else if c.strict {
            self.check_fields(c.resource, &body)?;
        }
        let (obj, created) = self.sim.store.patch_opt(
            c.resource,
            c.ns,
            name,
            kind,
            &body,
            c.part,
            c.write_opts(),
        )?;
        if created && !c.dry_run {
            self.faults.note_write(c.kind);
        }
        Ok(json_response(if created { 201 } else { 200 }, &obj))
    }

    /// `DELETE …/NAME`: the object as it was (a dry run only reads it).
    fn delete_one(&self, c: &Call<'_>, name: &str) -> Result<Response<Body>, ApiError> {
        let store = &self.sim.store;
        if c.dry_run {
            return Ok(json_response(200, &*store.get(c.resource, c.ns, name)?));
        }
        let gone = store.delete(c.resource, c.ns, name)?;
        Ok(json_response(200, &gone))
    }

    /// `DELETE` on a collection: every object matching the selectors, listed as deleted.
    fn delete_collection(&self, c: &Call<'_>) -> Result<Response<Body>, ApiError> {
        let store = &self.sim.store;
        let (labels, fields) = selectors(c.query)?;
        let (items, _) = store.list(c.resource, c.ns, |o| {
            labels.matches_labels(o) && fields.matches_fields(o)
        });
        let mut gone = Vec::new();
        for item in items {
            let name = item
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("");
            let item_ns = item.pointer("/metadata/namespace").and_then(Value::as_str);
            if !c.dry_run
                && let Ok(g) = store.delete(c.resource, item_ns, name)
            {
                gone.push((*g).clone());
            }
        }
        Ok(json_response(
            200,
            &list_doc(c.resource, gone, store.current_rv()),
        ))
    }
}

impl Server {
    /// `…/NAME/scale`: the object's replicas as an `autoscaling/v1 Scale`. A write sets the
    /// parent's desired replicas through an ordinary update, so its generation moves and the
    /// controllers roll it as they would after any spec change.
    async fn scale(
        &self,
        req: Request<Incoming>,
        method: &Method,
        c: &Call<'_>,
        name: &str,
    ) -> Result<Response<Body>, ApiError> {
        let (res, ns, content_type) = (c.resource, c.ns, c.content_type.as_str());
        let store = &self.sim.store;
        let paths = scale::paths(store, res).ok_or_else(|| ApiError::not_found(res, name))?;
        enum Write {
            Put(Value),
            Patch(PatchKind, Value),
        }
        let write = match *method {
            Method::GET => {
                let old = store.get(res, ns, name)?;
                return Ok(json_response(200, &scale::scale_of(&old, &paths)));
            }
            Method::PUT => {
                let body = read_body(req, content_type).await?;
                let named = body.pointer("/metadata/name").and_then(Value::as_str);
                if named != Some(name) {
                    return Err(ApiError::bad_request(format!(
                        "the name of the object ({}) does not match the name on the URL ({name})",
                        named.unwrap_or("")
                    )));
                }
                Write::Put(body)
            }
            Method::PATCH => {
                let kind = patch_kind(content_type)
                    .ok_or_else(|| ApiError::unsupported_media_type(content_type))?;
                Write::Patch(kind, read_body(req, content_type).await?)
            }
            _ => {
                return Err(ApiError::method_not_allowed(format!(
                    "the server does not allow this method on the requested resource ({method} scale)"
                )));
            }
        };
        // As the API server's GuaranteedUpdate: a write that raced a controller's is tried
        // again on the fresh object, unless the caller named the resourceVersion it wrote
        // against (then the race is the caller's conflict).
        let mut attempts = 0;
        loop {
            attempts += 1;
            let old = store.get(res, ns, name)?;
            let mut current = scale::scale_of(&old, &paths);
            let wanted = match &write {
                Write::Put(body) => body.clone(),
                Write::Patch(kind, body) => {
                    // The patch's own resourceVersion, if any, is the only precondition.
                    if let Some(meta) = current["metadata"].as_object_mut() {
                        meta.remove("resourceVersion");
                    }
                    scale::patched(&current, *kind, body)?
                }
            };
            let replicas = scale::wanted_replicas(&wanted, name)?;
            let precondition = wanted
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
                .filter(|rv| !rv.is_empty());
            // A Scale's resourceVersion is its parent's: a stale one is the parent's conflict.
            if let Some(want) = precondition
                && Some(want) != old["metadata"]["resourceVersion"].as_str()
            {
                return Err(ApiError::conflict(res, name));
            }
            // `old` carries its resourceVersion, so a write that raced this one is a 409.
            let updated = scale::with_replicas(&old, &paths, replicas);
            let opts = WriteOpts {
                subresource: Some("scale"),
                ..c.write_opts()
            };
            match store.replace_opt(res, ns, name, updated, Part::Main, opts) {
                Ok(stored) => return Ok(json_response(200, &scale::scale_of(&stored, &paths))),
                Err(e) if e.code == 409 && precondition.is_none() && attempts < 10 => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

/// The 404 of a path the server does not serve.
fn not_found() -> ApiError {
    ApiError {
        code: 404,
        reason: "NotFound",
        message: "the server could not find the requested resource".into(),
        details: Value::Null,
        list_continue: None,
    }
}

/// A request on a resource path, as every handler reads it: parsed once, before dispatch
/// (so a bad `dryRun` is an error whatever the verb).
struct Call<'a> {
    resource: ResourceId,
    kind: &'static str,
    ns: Option<&'a str>,
    subresource: Option<&'a str>,
    query: &'a HashMap<String, String>,
    /// `Content-Type`, `application/json` when absent.
    content_type: String,
    /// Whether the client accepts a `meta.k8s.io/v1` Table (kubectl get).
    as_table: bool,
    /// Whether the client asks for metadata only (`as=PartialObjectMetadata[List]`, as
    /// kube's `list_metadata` does): the API server then leaves out spec, status and data.
    as_metadata: bool,
    dry_run: bool,
    /// `fieldValidation=Strict`: unknown fields are errors.
    strict: bool,
    /// What a write may change: the status subresource or the rest.
    part: Part,
    /// `fieldManager` as the client named it.
    field_manager: Option<String>,
    /// Who owns what a write sets: `fieldManager`, else the User-Agent's product, as the API
    /// server defaults it.
    manager: Option<String>,
    /// `force=true` on a server-side apply.
    force: bool,
}

impl<'a> Call<'a> {
    fn of(
        req: &Request<Incoming>,
        route: &'a Route,
        query: &'a HashMap<String, String>,
    ) -> Result<Self, ApiError> {
        let content_type = req
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("application/json")
            .to_string();
        let accept = req
            .headers()
            .get(hyper::header::ACCEPT)
            .and_then(|v| v.to_str().ok());
        let as_table = accept.is_some_and(table::wanted);
        let as_metadata = !as_table && accept.is_some_and(metadata_wanted);
        let dry_run = dry_run(query)?;
        let strict = query.get("fieldValidation").map(String::as_str) == Some("Strict");
        let part = if route.subresource.as_deref() == Some("status") {
            Part::Status
        } else {
            Part::Main
        };
        let field_manager = query.get("fieldManager").filter(|m| !m.is_empty()).cloned();
        let agent = WatchKey::client_of(
            req.headers()
                .get(hyper::header::USER_AGENT)
                .and_then(|v| v.to_str().ok()),
        );
        let manager = field_manager
            .clone()
            .or_else(|| (!agent.is_empty()).then_some(agent));
        Ok(Call {
            field_manager,
            manager,
            force: flag(query, "force"),
            resource: route.resource,
            kind: resources::get(route.resource).kind,
            ns: route.namespace.as_deref(),
            subresource: route.subresource.as_deref(),
            query,
            content_type,
            as_table,
            as_metadata,
            dry_run,
            strict,
            part,
        })
    }
}

impl Call<'_> {
    fn write_opts(&self) -> WriteOpts<'_> {
        WriteOpts {
            dry_run: self.dry_run,
            manager: self.manager.as_deref(),
            force: self.force,
            subresource: None,
        }
    }
}

/// The collection a GET lists or watches, as fault tallies name it (`None` for other requests).
fn collection_key(
    store: &Store,
    req: &Request<Incoming>,
    path: &str,
    query: &HashMap<String, String>,
) -> Option<WatchKey> {
    if req.method() != Method::GET {
        return None;
    }
    let route = parse_route(store, path).filter(|r| r.name.is_none() && r.subresource.is_none())?;
    let selector = |name: &str| query.get(name).cloned().unwrap_or_default();
    Some(WatchKey {
        resource: resources::get(route.resource).qualified(),
        namespace: route.namespace.unwrap_or_default(),
        labels: selector("labelSelector"),
        fields: selector("fieldSelector"),
        client: WatchKey::client_of(
            req.headers()
                .get(hyper::header::USER_AGENT)
                .and_then(|v| v.to_str().ok()),
        ),
    })
}

async fn read_body(req: Request<Incoming>, content_type: &str) -> Result<Value, ApiError> {
    let bytes = Limited::new(req.into_body(), MAX_BODY)
        .collect()
        .await
        .map_err(|e| ApiError::bad_request(format!("reading the request body: {e}")))?
        .to_bytes();
    let value = decode_body(content_type, &bytes)?;
    // A JSON patch (RFC 6902) is a list of operations; every other body is an object.
    let json_patch = patch_kind(content_type) == Some(PatchKind::Json);
    if !(value.is_object() || json_patch && value.is_array()) {
        return Err(ApiError::bad_request(
            "the body of the request must be a JSON object",
        ));
    }
    Ok(value)
}

/// A list response serialized straight from the stored objects (no copies: a LIST of 10,000
/// pods is the largest response the simulator gives).
/// Whether an `Accept` header asks for metadata only (`as=PartialObjectMetadata` or
/// `as=PartialObjectMetadataList`, group meta.k8s.io).
fn metadata_wanted(accept: &str) -> bool {
    accept
        .split(',')
        .any(|part| part.contains("as=PartialObjectMetadata") && part.contains("g=meta.k8s.io"))
}

/// An object as a `PartialObjectMetadata`: its metadata alone.
fn partial_metadata(obj: &Value) -> Value {
    json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
           "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({}))})
}

fn list_response(res: ResourceId, page: &Page) -> Response<Body> {
    let rt = resources::get(res);
    let mut body = serde_json::to_vec(
        &json!({"kind": format!("{}List", rt.kind), "apiVersion": rt.api_version(),
        "metadata": page.metadata()}),
    )
    .unwrap_or_default();
    body.pop(); // reopen the object to append the items
    body.extend_from_slice(b",\"items\":[");
    for (i, item) in page.items.iter().enumerate() {
        if i > 0 {
            body.push(b',');
        }
        body.extend_from_slice(&item.bytes);
    }
    body.extend_from_slice(b"]}");
    Response::builder()
        .status(200)
        .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
        .body(full(body))
        .expect("static response parts are valid")
}

pub fn list_doc(res: ResourceId, items: Vec<Value>, rv: u64) -> Value {
    let rt = resources::get(res);
    json!({"kind": format!("{}List", rt.kind), "apiVersion": rt.api_version(),
        "metadata": {"resourceVersion": rv.to_string()}, "items": items})
}

/// Seeds the store with what a fresh cluster has: namespaces, then the scenario's objects.
pub fn seed(sim: &SimState) -> Result<()> {
    let store = &sim.store;
    let mut namespaces = vec!["default".to_string(), "kube-system".to_string()];
    namespaces.extend(sim.scenario.namespaces.iter().cloned());
    for ns in namespaces {
        store
            .ensure(*ids::NAMESPACES, json!({"metadata": {"name": ns}}))
            .map_err(|e| color_eyre::eyre::eyre!("seeding namespace {ns}: {}", e.message))?;
    }
    for obj in &sim.scenario.seed.objects {
        let api_version = obj["apiVersion"].as_str().unwrap_or("v1");
        let kind = obj["kind"].as_str().unwrap_or("");
        let res = store.resolve_kind(api_version, kind).ok_or_else(|| {
            color_eyre::eyre::eyre!("seed object of unknown kind {api_version}/{kind}")
        })?;
        store
            .ensure(res, obj.clone())
            .map_err(|e| color_eyre::eyre::eyre!("seeding {kind}: {}", e.message))?;
    }
    for release in &sim.scenario.seed.releases {
        for secret in crate::seed::release_secrets(release) {
            store.ensure(*ids::SECRETS, secret).map_err(|e| {
                color_eyre::eyre::eyre!("seeding release {}: {}", release.name, e.message)
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dry_run_write_is_counted_apart_from_the_writes_that_persist() {
        let stats = Stats::default();
        let path = "/api/v1/namespaces/apps/configmaps";
        stats.record(&Method::GET, path, path, "GET", false);
        stats.record(&Method::GET, path, path, "WATCH", false);
        stats.record(&Method::POST, path, path, "POST", true);
        stats.record(&Method::PATCH, path, path, "PATCH", true);
        let json = stats.to_json();
        assert_eq!(json["writes"], 0, "{json}");
        assert_eq!(json["dryRunWrites"], 2, "{json}");
        assert_eq!(json["byVerb"]["POST dryRun"], 1, "{json}");
        assert!(json["byVerb"].get("POST").is_none(), "{json}");
        stats.record(&Method::DELETE, path, path, "DELETE", false);
        let json = stats.to_json();
        assert_eq!(json["writes"], 1, "{json}");
        assert_eq!(json["byVerb"]["DELETE"], 1, "{json}");
        assert_eq!(json["requests"], 5, "{json}");
    }

    #[test]
    fn routes() {
        let store = Store::new();
        let parse_route = |p: &str| parse_route(&store, p);
        let r = parse_route("/apis/apps/v1/namespaces/apps/deployments/web/status").unwrap();
        assert_eq!(r.resource, *ids::DEPLOYMENTS);
        assert_eq!(r.namespace.as_deref(), Some("apps"));
        assert_eq!(r.name.as_deref(), Some("web"));
        assert_eq!(r.subresource.as_deref(), Some("status"));
        let r = parse_route("/api/v1/namespaces/apps").unwrap();
        assert_eq!(r.resource, *ids::NAMESPACES);
        assert_eq!(r.name.as_deref(), Some("apps"));
        let r = parse_route("/api/v1/namespaces/apps/status").unwrap();
        assert_eq!(r.subresource.as_deref(), Some("status"));
        let r = parse_route("/api/v1/pods").unwrap();
        assert_eq!((r.resource, r.namespace), (*ids::PODS, None));
        assert!(parse_route("/apis/apps/v1/namespaces/apps/nothings").is_none());
        assert!(parse_route("/api/v1/namespaces/apps/pods/a/b/c").is_none());
    }

    #[test]
    fn bodies_decode_by_content_type() {
        assert!(decode_body("application/json", b"{\"a\":1}").is_ok());
        assert!(decode_body("application/apply-patch+yaml", b"a: 1\n").is_ok());
        let err = decode_body("application/json", b"{nope").unwrap_err();
        assert_eq!(err.code, 400);
        let err = decode_body("application/vnd.kubernetes.protobuf", b"garbage").unwrap_err();
        assert_eq!(err.code, 400);
    }
}
