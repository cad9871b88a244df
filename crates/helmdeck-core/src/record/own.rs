//! The locks this machine's own earlier runs of a release left, read back from their records
//! in the state directory: what lets the next deploy tell its own leftover `pending-*`
//! revision from another operator's deploy in progress (see `engine::steps::left_lock`).

use std::path::Path;

use crate::engine::event::{Event, RecordedLock};
use crate::record::reader;

/// How many of the release's newest records are read: a lock is left by a recent run, and a
/// deploy should not read a hundred records before its first request.
const NEWEST: usize = 20;

/// Every lock the newest records of `release` in `namespace` (on the kube context `context`, as
/// the records are named) in the state directory say their helm left, newest record first.
/// Records given with `--record FILE` elsewhere are not read; an unreadable record says nothing.
pub fn left_locks(context: Option<&str>, namespace: &str, release: &str) -> Vec<RecordedLock> {
    match crate::record::default_dir() {
        Some(dir) => left_locks_in(&dir, context, namespace, release),
        None => vec![],
    }
}

pub fn left_locks_in(
    dir: &Path,
    context: Option<&str>,
    namespace: &str,
    release: &str,
) -> Vec<RecordedLock> {
    let prefix = crate::record::release_prefix(context, namespace, release);
    let Ok(read) = std::fs::read_dir(dir) else {
        return vec![];
    };
    let mut paths: Vec<_> = read
        .flatten()
        // Regular files only, by the entry's own type (as `replay --list` reads them).
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| crate::record::is_record(p))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix))
        })
        .collect();
    // Names sort in start order.
    paths.sort();
    paths
        .iter()
        .rev()
        .take(NEWEST)
        .filter_map(|p| reader::read(p).ok())
        .filter(|r| r.header.plan.release == release && r.header.plan.namespace == namespace)
        .filter_map(|r| {
            let left = r.lines.iter().rev().find_map(|l| match &l.event {
                Event::LeftLock(left) => Some(left.clone()),
                _ => None,
            })?;
            Some(RecordedLock {
                left,
                started: r.header.started,
            })
        })
        .collect()
}
