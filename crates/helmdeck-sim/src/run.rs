//! `helmdeck sim`: start the simulated cluster on loopback and serve until killed.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use color_eyre::eyre::{Result, WrapErr, bail};
use tokio::net::TcpListener;

use super::server::{self, Server};
use super::{Scenario, SimState, controllers};

/// A running simulated cluster.
pub struct Running {
    pub addr: SocketAddr,
    pub server: Arc<Server>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Running {
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// Binds, seeds and starts serving; returns once the server accepts connections.
pub async fn start(scenario: Scenario, listen: SocketAddr) -> Result<Running> {
    if !listen.ip().is_loopback() {
        bail!("helmdeck sim listens on loopback only; {listen} is not a loopback address");
    }
    let listener = TcpListener::bind(listen)
        .await
        .wrap_err_with(|| format!("cannot listen on {listen}"))?;
    let addr = listener
        .local_addr()
        .wrap_err("reading the bound address")?;
    let sim = SimState::new(scenario);
    server::seed(&sim)?;
    // Nodes and the default StorageClass exist before the first request, as on a real
    // cluster: a client that reads the store at once must not see them appear later.
    controllers::seed_nodes(&sim);
    let server = Server::new(sim.clone());
    let mut tasks = vec![
        controllers::spawn(sim.clone()),
        tokio::spawn(server.faults.clone().run()),
    ];
    let srv = server.clone();
    tasks.push(tokio::spawn(async move {
        if let Err(e) = srv.serve(listener).await {
            eprintln!("helmdeck sim: server stopped: {e:#}");
        }
    }));
    Ok(Running {
        addr,
        server,
        tasks,
    })
}

/// The context (and cluster and user) name a simulator's kubeconfig uses unless told otherwise.
pub const CONTEXT: &str = "helmdeck-sim";

/// A kubeconfig whose current context points at the simulator.
pub fn kubeconfig(url: &str, namespace: &str) -> String {
    kubeconfig_named(url, namespace, CONTEXT)
}

/// A kubeconfig whose current context, `name`, points at the simulator: the cluster and user
/// are named alike, so several such files listed in one `KUBECONFIG` (a fleet of simulators)
/// merge without one shadowing another. `name` is quoted: a context may hold colons.
pub fn kubeconfig_named(url: &str, namespace: &str, name: &str) -> String {
    let name = serde_json::to_string(name).expect("a string serializes");
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: {name}\n  cluster:\n    server: {url}\n\
contexts:\n- name: {name}\n  context:\n    cluster: {name}\n    user: {name}\n    namespace: {namespace}\n\
current-context: {name}\nusers:\n- name: {name}\n  user:\n    token: helmdeck-sim\n"
    )
}

pub fn write_kubeconfig(path: &Path, url: &str, namespace: &str) -> Result<()> {
    write_kubeconfig_named(path, url, namespace, CONTEXT)
}

/// [`write_kubeconfig`] with its context named `name`.
pub fn write_kubeconfig_named(path: &Path, url: &str, namespace: &str, name: &str) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).wrap_err_with(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, kubeconfig_named(url, namespace, name))
        .wrap_err_with(|| format!("writing kubeconfig {}", path.display()))
}

pub struct SimArgs {
    pub scenario: String,
    pub listen: SocketAddr,
    pub kubeconfig_out: Option<PathBuf>,
    /// The kubeconfig's context name ([`CONTEXT`] when `None`).
    pub context: Option<String>,
}

/// The `helmdeck sim` command: prints one `ready` line, then serves until killed.
pub async fn run(args: SimArgs) -> Result<()> {
    let scenario = Scenario::load(&args.scenario)?;
    let namespace = scenario
        .namespaces
        .first()
        .cloned()
        .unwrap_or_else(|| "default".into());
    let running = start(scenario, args.listen).await?;
    if let Some(path) = &args.kubeconfig_out {
        let name = args.context.as_deref().unwrap_or(CONTEXT);
        write_kubeconfig_named(path, &running.url(), &namespace, name)?;
    }
    match &args.kubeconfig_out {
        Some(p) => println!("ready {} kubeconfig={}", running.url(), p.display()),
        None => println!("ready {}", running.url()),
    }
    use std::io::Write;
    std::io::stdout().flush().ok();
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .wrap_err("installing the SIGTERM handler")?;
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    Ok(())
}

#[cfg(test)]
mod kubeconfig_tests {
    use super::*;

    #[test]
    fn a_named_kubeconfig_keeps_a_context_name_with_colons_whole() {
        let name = "arn:aws:eks:eu-west-2:123456789012:cluster/trust-1";
        let text = kubeconfig_named("http://127.0.0.1:1", "apps", name);
        let parsed: serde_json::Value = serde_saphyr::from_str(&text).expect("valid YAML");
        assert_eq!(parsed["current-context"], name);
        assert_eq!(parsed["contexts"][0]["name"], name);
        assert_eq!(parsed["contexts"][0]["context"]["cluster"], name);
        assert_eq!(parsed["clusters"][0]["name"], name);
        assert_eq!(parsed["users"][0]["name"], name);
        assert_eq!(parsed["contexts"][0]["context"]["namespace"], "apps");
    }
}
