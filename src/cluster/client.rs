//! The Kubernetes client, from the kubeconfig (and `--kube-context`) helm uses too.

use std::time::Duration;

use color_eyre::eyre::{Result, WrapErr, eyre};
use kube::Client;
use kube::config::{KubeConfigOptions, Kubeconfig};

/// How long the reachability check may take before the cluster counts as unreachable.
pub const REACH_TIMEOUT: Duration = Duration::from_secs(5);

pub struct Cluster {
    pub client: Client,
    /// The context's namespace (or `default`).
    pub default_namespace: String,
    /// The server URL, for messages.
    pub server: String,
}

impl Cluster {
    fn from_config(mut config: kube::Config) -> Result<Self> {
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
        })
    }
}

/// Builds a client for the context; does not contact the cluster.
pub async fn connect(context: Option<&str>) -> Result<Cluster> {
    let options = KubeConfigOptions {
        context: context.map(String::from),
        ..Default::default()
    };
    let config = match Kubeconfig::read() {
        Ok(kubeconfig) => kube::Config::from_custom_kubeconfig(kubeconfig, &options)
            .await
            .wrap_err("reading the kubeconfig")?,
        Err(_) if context.is_none() => kube::Config::infer()
            .await
            .wrap_err("no kubeconfig and not in a cluster")?,
        Err(e) => return Err(eyre!("reading the kubeconfig: {e}")),
    };
    Cluster::from_config(config)
}

/// A client for one kubeconfig file (the demo's, pointing at the embedded simulator).
pub async fn connect_file(path: &std::path::Path) -> Result<Cluster> {
    let kubeconfig =
        Kubeconfig::read_from(path).wrap_err_with(|| format!("reading {}", path.display()))?;
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .wrap_err("reading the kubeconfig")?;
    Cluster::from_config(config)
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
