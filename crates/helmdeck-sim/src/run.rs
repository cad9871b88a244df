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

/// A kubeconfig whose current context points at the simulator.
pub fn kubeconfig(url: &str, namespace: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: helmdeck-sim\n  cluster:\n    server: {url}\n\
contexts:\n- name: helmdeck-sim\n  context:\n    cluster: helmdeck-sim\n    user: helmdeck-sim\n    namespace: {namespace}\n\
current-context: helmdeck-sim\nusers:\n- name: helmdeck-sim\n  user:\n    token: helmdeck-sim\n"
    )
}

pub fn write_kubeconfig(path: &Path, url: &str, namespace: &str) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).wrap_err_with(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, kubeconfig(url, namespace))
        .wrap_err_with(|| format!("writing kubeconfig {}", path.display()))
}

pub struct SimArgs {
    pub scenario: String,
    pub listen: SocketAddr,
    pub kubeconfig_out: Option<PathBuf>,
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
        write_kubeconfig(path, &running.url(), &namespace)?;
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
