//! One line per Kubernetes event, newest first, as both drill-downs list them: age, kind,
//! reason, object, message (with its count).

use ratatui::text::{Line, Span};

use crate::engine::event::KubeEventView;
use crate::ui::fit;
use crate::ui::theme::Theme;

/// `reason_w`: the columns the reason is cut to (one more pads it).
pub fn event_line(
    e: &KubeEventView,
    now: Option<jiff::Timestamp>,
    width: usize,
    reason_w: usize,
    t: &Theme,
) -> Line<'static> {
    let object_w = if width >= 120 { 36 } else { 22 };
    let age = fit::age_at(e.last_seen.as_deref(), now);
    let kind_style = if e.kind == "Warning" {
        t.warn()
    } else {
        t.muted()
    };
    let count = if e.count > 1 {
        format!(" ×{}", e.count)
    } else {
        String::new()
    };
    let head = format!("{age:>4} ");
    let kind = fit::pad(&fit::end(&fit::inert(&e.kind), 7), 8);
    let reason = fit::pad(&fit::end(&fit::inert(&e.reason), reason_w), reason_w + 1);
    let object = fit::pad(&fit::middle(&fit::inert(&e.object), object_w), object_w + 1);
    let used = fit::width(&head) + fit::width(&kind) + fit::width(&reason) + fit::width(&object);
    let message = fit::end(
        &format!("{}{count}", fit::inert(&e.message)),
        width.saturating_sub(used),
    )
    .into_owned();
    Line::from(vec![
        Span::styled(head, t.muted()),
        Span::styled(kind, kind_style),
        Span::raw(reason),
        Span::styled(object, t.muted()),
        Span::raw(message),
    ])
}
