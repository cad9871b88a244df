//! Memory handed back between the passes of a long-running `watch --follow`.

/// Between two `--follow` passes: hands back to the OS the pages the pass freed. A pass's
/// transient peak (a LIST page of a namespace's Events, its body and summaries: ≈ 2 MB at
/// 500 Events) lands in glibc's per-thread arenas at different places each time, and what is
/// freed in the middle of an arena stays resident: over 100 revisions a follow's RSS crept up
/// by 3 MB with a flat live heap (docs/benchmarks.md). `malloc_trim` returns those pages.
pub fn give_back_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory the allocator holds; it has no
    // preconditions and never touches memory in use.
    unsafe {
        libc::malloc_trim(0);
    }
}
