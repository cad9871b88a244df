//! The header (what is inspected: release, namespace, revision, operation, chart; then the
//! revision's status and description) and the banner under it: the lock a `pending-*`
//! revision holds, with the command that clears it, or why the revision cannot be read.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::time::{self, AgeStyle::Short};
use crate::ui::fit;
use crate::ui::inspect::data::{self, InspectFrame};
use crate::ui::panes::{banner, header, wrap_spans};

fn identity(v: &InspectFrame) -> String {
    let i = v.inspection();
    let mut s = format!(" inspect {} → {}", i.release, i.namespace);
    match (&i.info, i.revision) {
        (Some(info), _) => {
            s.push_str(&format!(
                " · revision {} ({})",
                info.revision,
                info.operation.name()
            ));
            if let Some(newest) = v.data.newest().filter(|n| *n > info.revision) {
                s.push_str(&format!(" · newest {newest}"));
            }
            s.push_str(&format!(" · {} · app {}", info.chart, info.app_version));
        }
        (None, Some(rev)) => s.push_str(&format!(" · revision {rev}")),
        (None, None) => {}
    }
    s
}

fn title_line<'a>(v: &InspectFrame, width: usize) -> Line<'a> {
    let clock = match v.data.now {
        Some(now) => format!(" read {} ", now.strftime("%H:%M:%S")),
        None => String::new(),
    };
    header::brand_line(&identity(v), clock, width, &v.theme)
}

/// `✗ failed  Upgrade "demo" failed: …  · 01:44:25 (8m ago)`
fn status_line<'a>(v: &InspectFrame, width: usize) -> Line<'a> {
    let t = &v.theme;
    let i = v.inspection();
    let Some(info) = &i.info else {
        let what = match i.revision {
            Some(r) => format!(" ✗ revision {r} unreadable"),
            None => " ✗ nothing to inspect".to_string(),
        };
        let n = i.history.len();
        let stored = format!("  {n} revision{} stored", if n == 1 { "" } else { "s" });
        return Line::from(vec![
            Span::styled(what, t.bad()),
            Span::styled(
                fit::end(&stored, width.saturating_sub(30)).into_owned(),
                t.muted(),
            ),
        ]);
    };
    let (glyph, style) = data::status_mark(&info.status, t);
    let word = format!(" {glyph} {}", info.status);
    let when = info
        .last_deployed
        .as_deref()
        .map(|at| {
            let ago = data::ago(at, v.data.now)
                .map(|a| format!(" ({a})"))
                .unwrap_or_default();
            format!(" · {}{ago}", data::when(at, true))
        })
        .unwrap_or_default();
    let used = fit::width(&word) + 2;
    let room = width.saturating_sub(used);
    // The time gives way to the description when both do not fit.
    let when = if fit::width(&info.description) + fit::width(&when) <= room {
        when
    } else {
        String::new()
    };
    let description = fit::end(
        &fit::inert(&info.description),
        room.saturating_sub(fit::width(&when)),
    )
    .into_owned();
    Line::from(vec![
        Span::styled(word, style.add_modifier(Modifier::BOLD)),
        Span::raw("  "),
        Span::raw(description),
        Span::styled(when, t.muted()),
    ])
}

pub fn render(frame: &mut Frame, area: Rect, v: &InspectFrame) {
    let width = area.width as usize;
    let lines = vec![title_line(v, width), status_line(v, width)];
    frame.render_widget(Paragraph::new(lines), area);
}

enum Kind {
    Lock,
    Unreadable,
}

fn kind(v: &InspectFrame) -> Option<Kind> {
    let i = v.inspection();
    if i.lock.is_some() {
        Some(Kind::Lock)
    } else if i.info.is_none() {
        Some(Kind::Unreadable)
    } else {
        None
    }
}

fn lines(v: &InspectFrame, width: usize, rows: usize) -> Vec<Line<'static>> {
    let t = &v.theme;
    let i = v.inspection();
    let head: Vec<Line<'static>>;
    let mut out: Vec<Line<'static>> = Vec::new();
    match (kind(v), &i.lock) {
        (Some(Kind::Lock), Some(l)) => {
            // Narrow, the age says enough; wide, the time too.
            let since = match (&l.since, &l.age_seconds) {
                (_, Some(age)) if width < 100 => format!(" for {}", time::age(*age, Short)),
                (Some(s), Some(age)) => {
                    format!(
                        " since {} ({} ago)",
                        data::when(s, true),
                        time::age(*age, Short)
                    )
                }
                (Some(s), None) => format!(" since {}", data::when(s, true)),
                _ => String::new(),
            };
            let last = l
                .last_deployed
                .map(|r| format!(" · last deployed revision {r}"))
                .unwrap_or_else(|| " · no revision was ever deployed".into());
            head = wrap_spans(
                &[
                    (t.word_block(Color::Yellow), " ◐ LOCKED ".into()),
                    (
                        t.bold(),
                        format!(
                            "  revision {} is {}{since}",
                            l.revision,
                            fit::inert(&l.status)
                        ),
                    ),
                    (t.warn(), last),
                ],
                width,
            );
            out.extend(wrap_spans(
                &[
                    (t.muted(), "fix: ".into()),
                    (t.key(), fit::inert(&l.command).into_owned()),
                ],
                width,
            ));
            out.extend(wrap_spans(
                &[(t.muted(), fit::inert(&l.note).into_owned())],
                width,
            ));
        }
        (Some(Kind::Unreadable), _) => {
            head = wrap_spans(
                &[
                    (t.word_block(Color::Red), " ✗ UNREADABLE ".into()),
                    (t.bad(), "  exit 1  ".into()),
                    (
                        t.bold(),
                        fit::inert(i.error.as_deref().unwrap_or("unknown error")).into_owned(),
                    ),
                ],
                width,
            );
            let readable: Vec<i64> = i
                .history
                .iter()
                .filter(|r| r.error.is_none())
                .map(|r| r.revision)
                .collect();
            if let Some(last) = readable.last() {
                out.extend(wrap_spans(
                    &[
                        (t.muted(), "readable: ".into()),
                        (
                            t.key(),
                            format!(
                                "helmdeck inspect {} -n {} --revision {last}",
                                i.release, i.namespace
                            ),
                        ),
                    ],
                    width,
                ));
            }
        }
        _ => return Vec::new(),
    }
    // The command (and then the note) stays; the head gives up lines first.
    banner::fit_rows(head, out, rows)
}

/// Rows the banner takes (borders included): 0 when the release is neither locked nor
/// unreadable.
pub fn banner_height(v: &InspectFrame, width: u16, max: u16) -> u16 {
    if kind(v).is_none() {
        return 0;
    }
    let n = lines(
        v,
        width.saturating_sub(4) as usize,
        max.saturating_sub(2) as usize,
    )
    .len() as u16;
    n + 2
}

pub fn render_banner(frame: &mut Frame, area: Rect, v: &InspectFrame) {
    let t = &v.theme;
    let Some(k) = kind(v) else { return };
    let (colour, title, bottom) = match k {
        Kind::Lock => (t.warn(), " lock ", " helmdeck never runs the fix "),
        Kind::Unreadable => (t.bad(), " unreadable ", " q quits with exit 1 "),
    };
    let width = area.width.saturating_sub(4) as usize;
    let body = lines(v, width, area.height.saturating_sub(2) as usize);
    let bottom = fit::end(bottom, width);
    banner::render_box(frame, area, colour, title, &bottom, body, t);
}
