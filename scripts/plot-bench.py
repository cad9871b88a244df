#!/usr/bin/env python3
"""Plots cost against N from `cargo bench --bench rollout_wait` output, as an SVG.

Reads the `BENCH {json}` lines of one or more bench outputs and draws, per method, client CPU
seconds and lag after the last ready workload against N, both on log scales; below them, the
one-Deployment upgrade run (`"big": true` lines): peak RSS of helmdeck headless, its TUI, the
peer beside it (kdash) and the simulator, as bars. Standard library only (no matplotlib needed).

    scripts/plot-bench.py docs/bench/rollout_wait-*.txt > docs/bench/cost.svg
"""

import json
import math
import sys

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def read(paths):
    rows = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith("BENCH "):
                    row = json.loads(line[len("BENCH "):])
                    # The fleet's rows vary targets, not N: docs/benchmarks.md tabulates them.
                    if not row["method"].startswith("fleet "):
                        rows.append(row)
    return rows


def family(method):
    # The scale runs are helmdeck headless and the TUI too: one line each across N.
    if method.startswith("helmdeck --headless") or method.startswith("helmdeck deploy"):
        return "helmdeck headless"
    if method.startswith("helmdeck TUI"):
        return "helmdeck TUI"
    return method


def panel(x0, y0, w, h, title, series, key, unit):
    points = [(r["n"], r[key]) for rs in series.values() for r in rs if r.get(key)]
    if not points:
        return []
    xs = [math.log10(p[0]) for p in points]
    ys = [math.log10(max(p[1], 1e-3)) for p in points]
    xmin, xmax = math.floor(min(xs)), math.ceil(max(xs))
    ymin, ymax = math.floor(min(ys)), math.ceil(max(ys))
    xmax = max(xmax, xmin + 1)
    ymax = max(ymax, ymin + 1)

    def sx(n):
        return x0 + (math.log10(n) - xmin) / (xmax - xmin) * w

    def sy(v):
        return y0 + h - (math.log10(max(v, 1e-3)) - ymin) / (ymax - ymin) * h

    out = [f'<text x="{x0 + w / 2}" y="{y0 - 12}" text-anchor="middle" font-weight="bold">{title}</text>',
           f'<rect x="{x0}" y="{y0}" width="{w}" height="{h}" fill="none" stroke="#999"/>']
    for e in range(xmin, xmax + 1):
        x = sx(10 ** e)
        out.append(f'<line x1="{x}" y1="{y0}" x2="{x}" y2="{y0 + h}" stroke="#eee"/>')
        out.append(f'<text x="{x}" y="{y0 + h + 16}" text-anchor="middle">{10 ** e:g}</text>')
    for e in range(ymin, ymax + 1):
        y = sy(10 ** e)
        out.append(f'<line x1="{x0}" y1="{y}" x2="{x0 + w}" y2="{y}" stroke="#eee"/>')
        out.append(f'<text x="{x0 - 6}" y="{y + 4}" text-anchor="end">{10 ** e:g}</text>')
    out.append(f'<text x="{x0 + w / 2}" y="{y0 + h + 34}" text-anchor="middle">N workloads</text>')
    out.append(f'<text x="{x0 - 44}" y="{y0 + h / 2}" text-anchor="middle" '
               f'transform="rotate(-90 {x0 - 44} {y0 + h / 2})">{unit}</text>')
    for i, (name, rs) in enumerate(series.items()):
        colour = COLOURS[i % len(COLOURS)]
        pts = sorted((r["n"], r[key]) for r in rs if r.get(key))
        if not pts:
            continue
        path = " ".join(f"{sx(n):.1f},{sy(v):.1f}" for n, v in pts)
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for n, v in pts:
            out.append(f'<circle cx="{sx(n):.1f}" cy="{sy(v):.1f}" r="3.5" fill="{colour}">'
                       f'<title>{name}: N={n}, {v:.3g} {unit}</title></circle>')
    return out


def bars(x0, y0, w, rows):
    """Peak RSS (MiB) of each process of the one-Deployment upgrade run, one bar each."""
    items = []
    for r in rows:
        items.append((r["method"], r["rss_mib"], r.get("cpu")))
        if r.get("sim_rss_mib"):
            items.append((f"simulator, under: {r['method']}", r["sim_rss_mib"], None))
    if not items:
        return [], 0
    top = max(v for _, v, _ in items) or 1
    pods = rows[0]["n"]
    out = [f'<text x="{x0 + w / 2}" y="{y0 - 12}" text-anchor="middle" font-weight="bold">'
           f'one Deployment x {pods:,} pods upgraded: peak RSS (MiB), own process</text>']
    bar_w = w - 360
    for i, (name, v, cpu) in enumerate(items):
        y = y0 + i * 22
        length = v / top * bar_w
        colour = COLOURS[i % len(COLOURS)] if not name.startswith("simulator") else "#999"
        label = name if len(name) <= 58 else name[:57] + "…"
        out.append(f'<text x="{x0 + 350}" y="{y + 12}" text-anchor="end">{label}</text>')
        out.append(f'<rect x="{x0 + 358}" y="{y}" width="{length:.1f}" height="16" fill="{colour}"/>')
        extra = f", CPU {cpu:.2f} s" if cpu is not None else ""
        out.append(f'<text x="{x0 + 364 + length:.1f}" y="{y + 12}">{v:.0f}{extra}</text>')
    return out, len(items) * 22 + 30


def main():
    rows = read(sys.argv[1:])
    if not rows:
        sys.exit("no BENCH lines in the given files")
    series = {}
    big = [r for r in rows if r.get("big")]
    # Lines without a CPU figure (the idle-screen measure, the start breakdown) have no place on
    # these axes, nor the one-Deployment run, whose N counts pods of one workload.
    for r in rows:
        if "cpu" in r and not r.get("big"):
            series.setdefault(family(r["method"]), []).append(r)
    legend_rows = (len(series) + 2) // 3
    big_top = 372 + legend_rows * 18 + 40
    big_svg, big_h = bars(80, big_top, 820, big)
    width, height = 980, (big_top + big_h) if big_svg else 420
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>']
    svg += panel(80, 40, 340, 280, "client CPU seconds", series, "cpu", "CPU s")
    svg += panel(560, 40, 340, 280, "lag after the last ready workload", series, "lag", "s")
    for i, name in enumerate(series):
        y = 372 + (i // 3) * 18
        x = 80 + (i % 3) * 300
        svg.append(f'<rect x="{x}" y="{y - 9}" width="12" height="12" fill="{COLOURS[i % len(COLOURS)]}"/>')
        svg.append(f'<text x="{x + 18}" y="{y + 2}">{name}</text>')
    svg += big_svg
    svg.append("</svg>")
    print("\n".join(svg))


if __name__ == "__main__":
    main()
