//! Helm run as every step that runs it does (the upgrade, the rollbacks, `helm test`): under
//! the deploy's environment and cancel, its output streamed into the helm pane.

use crate::engine::event::Event;
use crate::engine::steps::Ctx;
use crate::helm::HelmError;
use crate::helm::process::{self, HelmExit, HelmRun, Stream};
use crate::text;

/// Runs helm with `args` under the deploy's environment and cancel (one SIGTERM, then a wait for
/// helm to exit by itself: see [`process::run`]), each output line streamed into the helm pane.
/// Helm's output is untrusted, so only SGR colours survive (the TUI shows them; headless strips
/// them); `also` sees each line as it was sent, for a step that reads helm's output too. The
/// upgrade, the rollbacks and `helm test` all run helm this way.
pub async fn stream_helm(
    ctx: &Ctx,
    args: Vec<String>,
    mut also: impl FnMut(&Stream, &str) + Send,
) -> Result<HelmExit, HelmError> {
    let sender = ctx.emit.clone();
    let on_line = move |stream: Stream, line: String| {
        let text = text::sanitize_line(&line, text::Keep::Colours);
        also(&stream, &text);
        sender.send(Event::HelmLine {
            stderr: stream == Stream::Stderr,
            text,
        });
    };
    let helm = HelmRun {
        bin: ctx.helm.clone(),
        args,
        env: ctx.helm_env.clone(),
    };
    process::run(helm, on_line, ctx.cancel.clone()).await
}
