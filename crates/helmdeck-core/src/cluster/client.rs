//! The Kubernetes client, from the kubeconfig (and `--kube-context`) helm uses too.

use std::time::Duration;

use color_eyre::eyre::{Result, WrapErr, eyre};
use kube::Client;
use kube::config::{KubeConfigOptions, Kubeconfig, KubeconfigError};

use crate::text;

/// How long the reachability check may take before the cluster counts as unreachable.
pub const REACH_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Clone)]
pub struct Cluster {
    pub client: Client,
    /// The context's namespace (or `default`).
    pub default_namespace: String,
    /// The server URL, for messages.
    pub server: String,
    /// The kube context used: `--kube-context`, else the kubeconfig's current context (None in
    /// a cluster, without a kubeconfig).
    pub context: Option<String>,
}

impl Cluster {
    fn from_config(mut config: kube::Config, context: Option<String>) -> Result<Self> {
        // Names helmdeck's requests in the API server's audit log (and the simulator's stats).
        config.headers.push((
            hyper::header::USER_AGENT,
            hyper::header::HeaderValue::from_static(concat!(
                "helmdeck/",
                env!("CARGO_PKG_VERSION")
            )),
        ));
        let server = config.cluster_url.to_string();
        let default_namespace = config.default_namespace.clone();
        let client = Client::try_from(config).wrap_err("building the Kubernetes client")?;
        Ok(Cluster {
            client,
            default_namespace,
            server,
            context,
        })
    }
}

/// Builds a client for the context; does not contact the cluster.
pub async fn connect(context: Option<&str>) -> Result<Cluster> {
    let options = KubeConfigOptions {
        context: context.map(String::from),
        ..Default::default()
    };
    let mut used = None;
    let config = match Kubeconfig::read() {
        Ok(kubeconfig) => {
            used = context
                .map(String::from)
                .or_else(|| kubeconfig.current_context.clone());
            kube::Config::from_custom_kubeconfig(kubeconfig, &options)
                .await
                .map_err(kubeconfig_error)?
        }
        // No kubeconfig file at all: perhaps helmdeck runs inside the cluster.
        Err(_) if context.is_none() && !kubeconfig_exists() => {
            kube::Config::infer().await.map_err(|e| {
                eyre!(
                    "no kubeconfig and not in a cluster: {}",
                    infer_error(&e.to_string())
                )
            })?
        }
        Err(e) => return Err(kubeconfig_error(e)),
    };
    Cluster::from_config(config, used)
}

/// The kubeconfig's context names (the files `KUBECONFIG` lists, merged, else
/// ~/.kube/config): what a fleet's targets are checked against before any request.
pub fn context_names() -> Result<Vec<String>> {
    let kubeconfig = Kubeconfig::read().map_err(kubeconfig_error)?;
    Ok(kubeconfig.contexts.into_iter().map(|c| c.name).collect())
}

/// A kubeconfig the client cannot use, said in one line: the parser's first line with quoted
/// values and credentials masked (its later lines quote the file, tokens included).
fn kubeconfig_error(e: KubeconfigError) -> color_eyre::Report {
    match e {
        // No content of the file in it: the path is worth seeing whole.
        KubeconfigError::ReadConfig(error, path) => {
            eyre!("reading the kubeconfig {}: {error}", path.display())
        }
        other => eyre!(
            "reading the kubeconfig: {}",
            text::file_error(&other.to_string())
        ),
    }
}

/// kube's "not in a cluster, no kubeconfig" message, masked as a file's parser message is, but
/// with the kubeconfig's path shown as it is: kube quotes it `'"/path"'` (Debug), which the
/// masking would take for a value, and a path is not one.
fn infer_error(message: &str) -> String {
    let default = std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".kube/config"));
    let mut message = message.to_string();
    if let Some(path) = default {
        let quoted = format!("'{path:?}'");
        message = message.replace(&quoted, &format!("{}", path.display()));
    }
    text::file_error(&message)
}

/// Whether a kubeconfig file is there to read ($KUBECONFIG, else ~/.kube/config).
fn kubeconfig_exists() -> bool {
    let named = std::env::var_os("KUBECONFIG").is_some_and(|v| !v.is_empty());
    named
        || std::env::var_os("HOME")
            .is_some_and(|home| std::path::Path::new(&home).join(".kube/config").exists())
}

/// A client for one kubeconfig file (the demo's, pointing at the embedded simulator).
pub async fn connect_file(path: &std::path::Path) -> Result<Cluster> {
    let kubeconfig =
        Kubeconfig::read_from(path).wrap_err_with(|| format!("reading {}", path.display()))?;
    let context = kubeconfig.current_context.clone();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .wrap_err("reading the kubeconfig")?;
    Cluster::from_config(config, context)
}

/// `GET /version` within [`REACH_TIMEOUT`]; the server's gitVersion.
pub async fn reachable(cluster: &Cluster) -> Result<String> {
    match tokio::time::timeout(REACH_TIMEOUT, cluster.client.apiserver_version()).await {
        Ok(Ok(info)) => Ok(info.git_version),
        Ok(Err(e)) => Err(eyre!("cluster {} unreachable: {e}", cluster.server)),
        Err(_) => Err(eyre!(
            "cluster {} unreachable: no answer within {}s",
            cluster.server,
            REACH_TIMEOUT.as_secs()
        )),
    }
}
