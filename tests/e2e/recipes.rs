//! docs/recipes/Makefile run as an operator runs it: `make deploy` and `make xnat-init` on the
//! FLIP-shaped chart with the recipe's helmdeck.toml beside it (the toggle, the Job, the
//! selector and the deny list all come from that file), against `helmdeck sim`. helmdeck's exit
//! code reaches make unchanged: 0 is make's 0; 1 and 3 stop make, which names them in its
//! `Error N` line (GNU make itself exits 2 on any failed recipe) and in the report it leaves.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::flip::{CRASHING_API, PREFIX, RELEASE, create_trust_secret, flip_chart};
use crate::support::{Sim, repo, text, tool};

/// The flip-like chart copied into the sim's home, with docs/recipes/helmdeck.toml beside
/// its Chart.yaml.
fn chart_with_recipe(sim: &Sim) -> PathBuf {
    let chart = sim.home().join("chart");
    let status = std::process::Command::new("cp")
        .arg("-R")
        .arg(flip_chart())
        .arg(&chart)
        .status()
        .expect("run cp");
    assert!(status.success(), "cp the chart");
    std::fs::copy(
        repo().join("docs/recipes/helmdeck.toml"),
        chart.join("helmdeck.toml"),
    )
    .expect("copy the recipe's helmdeck.toml");
    chart
}

struct MakeRun {
    out: Output,
    report: Value,
}

impl MakeRun {
    /// The recipe's exit code as make saw it: 0 when make succeeded, else the N of make's
    /// `make: *** [Makefile:LINE: TARGET] Error N`.
    fn recipe_code(&self) -> i32 {
        if self.out.status.success() {
            return 0;
        }
        // GNU make's own status for a failed recipe, whatever the recipe's code.
        assert_eq!(self.out.status.code(), Some(2), "{}", self.describe());
        let stderr = String::from_utf8_lossy(&self.out.stderr);
        let line = stderr
            .lines()
            .find(|l| l.starts_with("make: *** ["))
            .unwrap_or_else(|| panic!("no make error line: {}", self.describe()));
        line.rsplit_once("] Error ")
            .and_then(|(_, n)| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("not make's Error N: {line}"))
    }

    fn verdict_code(&self) -> Option<i64> {
        self.report["verdict"]["code"].as_i64()
    }

    fn describe(&self) -> String {
        format!("{}\nreport: {:#}", text(&self.out), self.report["verdict"])
    }
}

/// `make -f docs/recipes/Makefile TARGET` with the variables an operator would set, run in
/// the sim's home; the report is read back.
fn make(sim: &Sim, target: &str, chart: &Path, flags: &str) -> MakeRun {
    let report = sim.home().join(format!("{target}.json"));
    let junit = sim.home().join(format!("{target}.xml"));
    let _ = std::fs::remove_file(&report);
    let vars = [
        format!("HELMDECK={}", env!("CARGO_BIN_EXE_helmdeck")),
        format!("RELEASE={RELEASE}"),
        format!("CHART={}", chart.display()),
        format!("NAMESPACE={}", sim.namespace),
        format!("REPORT={}", report.display()),
        format!("JUNIT={}", junit.display()),
        format!("HELMDECK_FLAGS={flags}"),
    ];
    let makefile = repo().join("docs/recipes/Makefile");
    let mut args = vec!["-f", makefile.to_str().expect("a UTF-8 path"), target];
    args.extend(vars.iter().map(String::as_str));
    let out = sim
        .client_command(Path::new("make"), &args)
        .current_dir(sim.home())
        .env("HELM_BIN", tool("helm"))
        .output()
        .expect("run make (GNU make)");
    let report = std::fs::read_to_string(&report)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    MakeRun { out, report }
}

#[test]
fn make_deploy_lands_a_green_release_and_make_xnat_init_reruns_the_init_step() {
    let sim = Sim::start("all-green");
    create_trust_secret(&sim, "db-pw-1", "admin-pw-1");
    let chart = chart_with_recipe(&sim);

    let run = make(&sim, "deploy", &chart, "--timeout 60s");
    assert_eq!(run.recipe_code(), 0, "{}", run.describe());
    assert_eq!(run.verdict_code(), Some(0), "{}", run.describe());
    // The settings came from the recipe's helmdeck.toml: the init Job ran, the GPU client is
    // on the deny list.
    let hooks = run.report["hooks"].as_array().expect("hooks");
    let init = hooks.last().expect("the init Job's entry");
    assert_eq!(init["name"], format!("{PREFIX}xnat-init"), "{init:#}");
    assert_eq!(init["phase"], "Succeeded", "{init:#}");
    let fl_client = run.report["workloads"]
        .as_array()
        .expect("workloads")
        .iter()
        .find(|w| w["name"] == format!("{PREFIX}fl-client"))
        .unwrap_or_else(|| panic!("no fl-client: {}", run.describe()));
    assert_eq!(fl_client["optional"], true, "{fl_client:#}");
    assert!(
        sim.home().join("deploy.xml").is_file(),
        "make deploy writes the JUnit file"
    );

    let run = make(&sim, "xnat-init", &chart, "--timeout 60s");
    assert_eq!(run.recipe_code(), 0, "{}", run.describe());
    assert_eq!(run.verdict_code(), Some(0), "{}", run.describe());
    assert_eq!(run.report["only"], "init", "{}", run.describe());
}

#[test]
fn make_deploy_passes_a_failed_rollout_through_as_1() {
    let sim = Sim::start_yaml(CRASHING_API);
    create_trust_secret(&sim, "db-pw-1", "admin-pw-1");
    let chart = chart_with_recipe(&sim);
    let run = make(
        &sim,
        "deploy",
        &chart,
        "--timeout 90s --failures-allowed-per-replica 1",
    );
    assert_eq!(run.recipe_code(), 1, "{}", run.describe());
    assert_eq!(run.verdict_code(), Some(1), "{}", run.describe());
    assert_eq!(run.report["verdict"]["outcome"], "failed");
}

#[test]
fn make_deploy_and_make_xnat_init_pass_an_init_failure_through_as_3() {
    let sim = Sim::start_yaml(
        "namespaces: [apps]\ntime_scale: 1000\njobs:\n  - {match: '*-xnat-init', outcome: fail}\n",
    );
    create_trust_secret(&sim, "db-pw-1", "admin-pw-1");
    let chart = chart_with_recipe(&sim);

    let run = make(&sim, "deploy", &chart, "--timeout 60s");
    assert_eq!(run.recipe_code(), 3, "{}", run.describe());
    assert_eq!(run.verdict_code(), Some(3), "{}", run.describe());
    assert_eq!(run.report["verdict"]["outcome"], "live-init-incomplete");

    // What exit 3 asks for: the init step again, with the settings file's toggle and Job.
    let run = make(&sim, "xnat-init", &chart, "--timeout 60s");
    assert_eq!(run.recipe_code(), 3, "{}", run.describe());
    assert_eq!(run.verdict_code(), Some(3), "{}", run.describe());
    assert_eq!(run.report["only"], "init", "{}", run.describe());
}
