#!/usr/bin/env python3
"""Screenshot of the helmdeck TUI from a real run: `helmdeck demo` under tmux, captured with
its escapes (`capture-pane -e`), and the cells drawn to a PNG with Pillow.

    python3 scripts/screenshot.py [--scenario optional-pending] [--size 140x40] \
        [--keys 'j j Enter'] [--out docs/screenshot.png]

Needs: tmux, Pillow (`pip install pillow`), a monospace TTF (DejaVu Sans Mono, Debian's
fonts-dejavu-core), a built `target/debug/helmdeck` and `.tools/bin/helm`.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

REPO = Path(__file__).resolve().parent.parent

BG = (24, 26, 33)
FG = (208, 210, 214)
# The 16 ANSI colours (a calm xterm-like palette).
ANSI = [
    (40, 42, 54), (224, 92, 92), (110, 200, 120), (229, 192, 100),
    (98, 150, 230), (190, 130, 220), (86, 196, 210), (200, 202, 206),
    (110, 114, 128), (255, 120, 120), (140, 230, 150), (250, 215, 130),
    (130, 175, 255), (215, 160, 240), (120, 220, 235), (245, 246, 248),
]


def xterm256(n):
    if n < 16:
        return ANSI[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return (steps[n // 36], steps[(n // 6) % 6], steps[n % 6])
    v = 8 + (n - 232) * 10
    return (v, v, v)


def font_file(bold):
    name = "DejaVu Sans Mono:style=Bold" if bold else "DejaVu Sans Mono"
    try:
        out = subprocess.run(["fc-match", "-f", "%{file}", name], capture_output=True, text=True, check=True).stdout
        if out and Path(out).exists():
            return out
    except (OSError, subprocess.CalledProcessError):
        pass
    base = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono"
    return base + ("-Bold.ttf" if bold else ".ttf")


class Cell:
    __slots__ = ("ch", "fg", "bg", "bold", "dim", "reverse", "italic", "underline", "width")

    def __init__(self, ch, attrs, width):
        self.ch = ch
        self.fg, self.bg, self.bold, self.dim, self.reverse, self.italic, self.underline = attrs
        self.width = width


SGR = re.compile(r"\x1b\[([0-9;:]*)m")


def apply_sgr(params, attrs):
    fg, bg, bold, dim, reverse, italic, underline = attrs
    nums = [int(p) if p else 0 for p in re.split(r"[;:]", params)] if params else [0]
    i = 0
    while i < len(nums):
        n = nums[i]
        if n == 0:
            fg, bg, bold, dim, reverse, italic, underline = None, None, False, False, False, False, False
        elif n == 1:
            bold = True
        elif n == 2:
            dim = True
        elif n == 3:
            italic = True
        elif n == 4:
            underline = True
        elif n == 7:
            reverse = True
        elif n == 22:
            bold = dim = False
        elif n == 23:
            italic = False
        elif n == 24:
            underline = False
        elif n == 27:
            reverse = False
        elif 30 <= n <= 37:
            fg = ANSI[n - 30]
        elif n == 39:
            fg = None
        elif 40 <= n <= 47:
            bg = ANSI[n - 40]
        elif n == 49:
            bg = None
        elif 90 <= n <= 97:
            fg = ANSI[n - 90 + 8]
        elif 100 <= n <= 107:
            bg = ANSI[n - 100 + 8]
        elif n in (38, 48):
            colour = None
            if i + 2 < len(nums) + 1 and i + 1 < len(nums) and nums[i + 1] == 5 and i + 2 < len(nums):
                colour = xterm256(nums[i + 2])
                i += 2
            elif i + 1 < len(nums) and nums[i + 1] == 2 and i + 4 < len(nums):
                colour = tuple(nums[i + 2:i + 5])
                i += 4
            if colour is not None:
                if n == 38:
                    fg = colour
                else:
                    bg = colour
        i += 1
    return (fg, bg, bold, dim, reverse, italic, underline)


def char_width(ch):
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def parse(text, width):
    rows = []
    attrs = (None, None, False, False, False, False, False)
    for line in text.split("\n"):
        row = []
        pos = 0
        for m in SGR.finditer(line):
            for ch in line[pos:m.start()]:
                row.append(Cell(ch, attrs, char_width(ch)))
            attrs = apply_sgr(m.group(1), attrs)
            pos = m.end()
        for ch in line[pos:]:
            if ch == "\x1b":
                continue
            row.append(Cell(ch, attrs, char_width(ch)))
        cols = sum(c.width for c in row)
        while cols < width:
            row.append(Cell(" ", attrs, 1))
            cols += 1
        rows.append(row)
    return rows


def blend(a, b, t):
    return tuple(int(a[i] * (1 - t) + b[i] * t) for i in range(3))


def render(rows, out, size=15, pad=14):
    regular = ImageFont.truetype(font_file(False), size)
    bold = ImageFont.truetype(font_file(True), size)
    ascent, descent = regular.getmetrics()
    cw = round(regular.getlength("M"))
    ch = ascent + descent
    width = max(sum(c.width for c in r) for r in rows)
    img = Image.new("RGB", (width * cw + 2 * pad, len(rows) * ch + 2 * pad), BG)
    draw = ImageDraw.Draw(img)
    for y, row in enumerate(rows):
        x = 0
        for cell in row:
            fg = cell.fg or FG
            bg = cell.bg or BG
            if cell.reverse:
                fg, bg = bg, fg
            if cell.dim:
                fg = blend(fg, bg, 0.45)
            px, py = pad + x * cw, pad + y * ch
            if bg != BG:
                draw.rectangle([px, py, px + cell.width * cw - 1, py + ch - 1], fill=bg)
            if cell.ch.strip():
                draw.text((px, py), cell.ch, font=bold if cell.bold else regular, fill=fg)
            if cell.underline:
                draw.line([px, py + ch - 2, px + cell.width * cw, py + ch - 2], fill=fg)
            x += cell.width
    img.save(out)


def tmux(sock, *args, check=True):
    return subprocess.run(["tmux", "-L", sock, "-f", "/dev/null", *args], capture_output=True, text=True, check=check)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=str(REPO / "target/debug/helmdeck"))
    ap.add_argument("--helm", default=str(REPO / ".tools/bin/helm"))
    ap.add_argument("--scenario", default="optional-pending")
    ap.add_argument("--size", default="140x40")
    ap.add_argument("--keys", default="", help="tmux key names sent after the verdict, space-separated")
    ap.add_argument("--out", default=str(REPO / "docs/screenshot.png"))
    ap.add_argument("--font-size", type=int, default=15)
    ap.add_argument("--timeout", type=float, default=120)
    args = ap.parse_args()
    w, h = (int(v) for v in args.size.split("x"))
    sock = f"helmdeck-shot-{os.getpid()}"
    env_home = tempfile.mkdtemp(prefix="helmdeck-shot-")
    os.environ["HOME"] = env_home
    os.environ.pop("NO_COLOR", None)
    os.environ.pop("TMUX", None)
    os.environ["TERM"] = "xterm-256color"
    command = f"{args.bin} demo --scenario {args.scenario} --helm {args.helm}"
    tmux(sock, "new-session", "-d", "-s", "t", "-x", str(w), "-y", str(h), command, ";", "set-option", "-t", "t", "remain-on-exit", "on")
    try:
        deadline = time.time() + args.timeout
        while True:
            screen = tmux(sock, "capture-pane", "-p", "-t", "t").stdout
            if any(word in screen for word in ("LANDED", "FAILED", "INIT INCOMPLETE")):
                break
            if time.time() > deadline:
                sys.exit(f"no verdict within {args.timeout}s; the pane shows:\n{screen}")
            time.sleep(0.5)
        for key in args.keys.split():
            tmux(sock, "send-keys", "-t", "t", key)
            time.sleep(0.3)
        # Let a spinner-free frame settle (the UI redraws on a 250 ms tick).
        time.sleep(1.0)
        text = tmux(sock, "capture-pane", "-p", "-e", "-t", "t").stdout
        tmux(sock, "send-keys", "-t", "t", "q", check=False)
        time.sleep(0.5)
    finally:
        tmux(sock, "kill-server", check=False)
    rows = parse(text.rstrip("\n"), w)[:h]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    render(rows, args.out, size=args.font_size)
    print(f"wrote {args.out} ({w}x{h} cells)")


if __name__ == "__main__":
    main()
