#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Draws bench/run's chart as one SVG file, with Python's standard library alone.

    bench/chart.py RAW.jsonl OUT.svg [--title TEXT]

bench/run calls write() after its table (OUT/chart.svg); the command line redraws the chart from
an existing run's raw.jsonl (the server, machine and commit come from the table.md beside it when
there is one, the date from the directory's UTC stamp or the file's time).

Two parts, from the lines bench/run wrote (each driver line carries its repetition's "ceiling",
what that is, "ceiling_is", and "ratio", its headline figure over the ceiling):

- Per scenario (in the order the run made them; not many-held, whose reference is a budget), one
  horizontal bar per entry: relock (the defaults), relock async where it ran, the peer (Redisson)
  and the ceiling itself. A bar's length is the median of the entry's headline figure over the
  repetitions divided by the median ceiling, so the ceiling's bar is 1 (the dashed line) and the
  figure printed on a bar is the one the table shows. Each panel has its own scale and says what
  its figure is, which way is better and what 1 stands for. An entry over OFF_SCALE (20) x the
  ceiling beside others within it (a Python peer that polls, bench/run --python) is cut at the
  axis's end, with a break and "off scale" on it, so that the others stay readable.
- The distribution of the uncontended pair (pair_cdf_us) and of the handoff (handoff_cdf_us) as
  CDFs, x in us on a log scale, one line per entry: the quantiles the drivers print
  (bench/support.cpp, cdf_quantiles), of the repetition whose p50 is the median of the entry's
  (the lower middle one for an even count): one real window, not a blend of several. A dashed
  vertical line marks the scenario's ceiling. Without those fields (drivers older than them) the
  plot says the data is missing.

Colours: Okabe and Ito's palette (told apart with the common colour-vision deficiencies), and the
CDF lines differ in dash pattern too.
"""

import argparse
import datetime
import json
import math
import os
import re
import statistics
import sys
from xml.sax.saxutils import escape

WIDTH = 900
FONT = "DejaVu Sans, Verdana, Helvetica, Arial, sans-serif"
INK = "#1a1a1a"
MUTED = "#555555"
GRID = "#d9d9d9"
CEILING_COLOUR = "#767676"  # white text on it still reads (4.5:1)
# Okabe-Ito: blue, sky blue, vermillion, bluish green, reddish purple, orange.
PALETTE = ["#0072B2", "#56B4E9", "#D55E00", "#009E73", "#CC79A7", "#E69F00"]
DASHES = ["", "7,4", "2,3", "9,3,2,3", "4,2", "1,2"]

# The headline figure of a scenario (the one its "ratio" divides by the ceiling); a tls- or a
# cluster- scenario reads as its twin. Unknown scenarios still draw, as "figure".
FIGURE = {
    "uncontended": "lock + unlock pair p50",
    "fenced-uncontended": "fenced lock + unlock pair p50",
    "uncontended-synced": "pair p50, with a replica",
    "multi-3": "MultiLock pair p50",
    "multi-3-servers": "MultiLock pair p50, 3 servers",
    "n-locks": "pairs/s, 8 threads on 8 locks",
    "cluster-n-locks": "pairs/s, 8 threads on 8 locks, 3 masters",
    "one-lock": "acquisitions/s, 8 threads on 1 lock",
    "handoff": "handoff p50 (release to next owner)",
    "fair-handoff": "fair lock handoff p50",
    "rw-read": "read acquisitions/s, 8 readers",
    "rw-mixed": "writes/s, 90 % reads",
    "queue": "offer + take pairs/s",
    "queue-delayed": "delayed queue lateness p50",
    "semaphore": "acquire + release pairs/s",
    "latch": "count_down wake-up p50",
    "connect": "client start p50",
}
OFF_SCALE = 20  # draw_bars: bars above this many x the ceiling may be cut (see there)
SKIP = {"many-held"}  # its reference is a budget of renewal commands, not what the server allows

# The distributions drawn: (scenario, field, its p50 field, title).
CDFS = [
    ("uncontended", "pair_cdf_us", "pair_p50_us", "uncontended: lock + unlock pair", "pairs"),
    ("handoff", "handoff_cdf_us", "handoff_p50_us", "handoff: release to the next owner",
     "handoffs"),
]


# ---------------------------------------------------------------- data
def read_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def entries(lines):
    """The entries drawn, as (lib, variant, name): relock's defaults, relock async, then each
    entry of another lib (the peers), in the order they first appear."""
    seen = []
    for l in lines:
        key = (l.get("lib"), l.get("variant"))
        if key[0] in (None, "redis") or key in seen:
            continue
        seen.append(key)
    out = [k for k in seen if k == ("relock", "default")] + \
        [k for k in seen if k == ("relock", "async")] + \
        [k for k in seen if k[0] != "relock"]
    return [(lib, variant, name_of(lib, variant)) for lib, variant in out]


def name_of(lib, variant):
    if lib in ("relock", "relock-python"):  # this repo's: C++, and the Python binding
        return lib if variant == "default" else lib + " " + variant
    # "4.7.0 codec=Kryo5Codec ...": the version alone. The Python peers (bench/run --python)
    # keep their packages' spelling: redis-py, pottery.
    name = "Redisson" if lib == "redisson" else lib
    return "%s %s" % (name, (variant or "").split(" ")[0])


def server_of(lines, server):
    """"redis 7.0.15" as given, else the ceiling lines' lib ("redis")."""
    if server:
        return server
    return next((l["lib"] for l in lines if l.get("lib") == "redis"), "the server")


def median(values):
    values = [v for v in values if isinstance(v, (int, float))]
    return statistics.median(values) if values else None


def unit_of(ceiling_is):
    """("us" or "/s", the reference without its unit) from e.g. "2 x RTT p50 (us)"."""
    m = re.match(r"^(.*?)\s*\(([^()]*)\)\s*$", ceiling_is or "")
    if not m:
        return "", ceiling_is or ""
    unit = m.group(2)
    return ("us" if unit == "us" else "/s" if unit.endswith("/s") else unit), m.group(1)


def bar_panels(lines, shown):
    """[(scenario, header, [(name, colour, ratio, text)])] for every scenario with a ceiling."""
    order = []
    for l in lines:
        s = l.get("scenario")
        if l.get("lib") not in (None, "redis") and s not in order and s not in SKIP:
            order.append(s)
    panels = []
    for s in order:
        mine = [l for l in lines if l.get("scenario") == s and l.get("lib") != "redis"]
        ceiling = median([l.get("ceiling") for l in mine])
        ceiling_is = next((l["ceiling_is"] for l in mine if l.get("ceiling_is")), None)
        if not ceiling or not ceiling_is:
            continue
        unit, reference = unit_of(ceiling_is)
        bars = []
        for i, (lib, variant, name) in enumerate(shown):
            own = [l for l in mine if l.get("lib") == lib and l.get("variant") == variant]
            figure = median([l["ratio"] * l["ceiling"] for l in own
                             if isinstance(l.get("ratio"), (int, float)) and l.get("ceiling")])
            if figure is None:
                continue
            bars.append((name, PALETTE[i % len(PALETTE)], figure / ceiling,
                         "%s  (%s)" % (number(figure, unit), ratio_text(figure / ceiling))))
        if not bars:
            continue
        bars.append(("ceiling", CEILING_COLOUR, 1.0, number(ceiling, unit)))
        base = s[len("tls-"):] if s.startswith("tls-") else s
        what = FIGURE.get(base, "figure") + (", over TLS" if s.startswith("tls-") else "")
        better = "lower is better" if unit == "us" else "higher is better" if unit == "/s" \
            else ""
        header = "%s%s; 1 = %s" % (what, ", " + better if better else "", pretty(reference))
        panels.append((s, header, bars))
    return panels


def cdf_lines(lines, shown, scenario, field, p50_field):
    """[(name, colour, dash, rep, [(q, us)])] of the entries that have the distribution."""
    out = []
    for i, (lib, variant, name) in enumerate(shown):
        own = [l for l in lines if l.get("scenario") == scenario and l.get("lib") == lib and
               l.get("variant") == variant and l.get(field) and
               isinstance(l.get(p50_field), (int, float))]
        if not own:
            continue
        own.sort(key=lambda l: l[p50_field])
        pick = own[(len(own) - 1) // 2]
        points = [(q, us) for q, us in pick[field] if us is not None and us > 0]
        if points:
            out.append((name, PALETTE[i % len(PALETTE)], DASHES[i % len(DASHES)],
                        pick.get("rep"), points))
    return out


def cdf_reference(lines, scenario):
    """(us, label) of the scenario's ceiling, for the dashed line."""
    mine = [l for l in lines if l.get("scenario") == scenario and l.get("lib") != "redis"]
    c = median([l.get("ceiling") for l in mine])
    ceiling_is = next((l["ceiling_is"] for l in mine if l.get("ceiling_is")), None)
    if not c or not ceiling_is:
        return None
    return c, pretty(unit_of(ceiling_is)[1])


# ---------------------------------------------------------------- text
def pretty(text):
    return text.replace(" x ", " \u00d7 ").replace("(us)", "(\u00b5s)")


def number(v, unit):
    if unit == "us":
        if v >= 10_000:
            return "%s ms" % ("%.1f" % (v / 1000) if v < 100_000 else "{:,.0f}".format(v / 1000))
        return ("{:,.0f}" if v >= 100 else "{:.0f}" if v >= 10 else "{:.1f}").format(v) + \
            " \u00b5s"
    if unit == "/s":
        return "{:,.0f}/s".format(v)
    return "{:,.3g}".format(v) + (" " + unit if unit else "")


def ratio_text(r):
    return ("%.2f" if r < 10 else "%.1f" if r < 100 else "%.0f") % r + "\u00d7"


def text_width(s, size):
    """An estimate of a string's width in px (DejaVu Sans averages ~0.6 em a character)."""
    wide = sum(1 for c in s if c.isupper() or c in "mwMW\u00b5%")
    narrow = sum(1 for c in s if c in " .,:;il|()[]'!1/")
    return size * (0.58 * (len(s) - wide - narrow) + 0.75 * wide + 0.33 * narrow)


# ---------------------------------------------------------------- SVG
class Svg:
    def __init__(self):
        self.parts = []

    def add(self, s):
        self.parts.append(s)

    def text(self, x, y, s, size=13, anchor="start", weight="normal", fill=INK, extra=""):
        self.add('<text x="%.1f" y="%.1f" font-size="%g" text-anchor="%s" font-weight="%s" '
                 'fill="%s"%s>%s</text>' % (x, y, size, anchor, weight, fill,
                                            " " + extra if extra else "", escape(s)))

    def line(self, x1, y1, x2, y2, stroke=GRID, width=1, dash=""):
        self.add('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%g"%s/>'
                 % (x1, y1, x2, y2, stroke, width,
                    ' stroke-dasharray="%s"' % dash if dash else ""))

    def rect(self, x, y, w, h, fill, extra=""):
        self.add('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"%s/>' %
                 (x, y, w, h, fill, " " + extra if extra else ""))

    def document(self, height):
        return ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
                'viewBox="0 0 %d %d" font-family="%s">\n<rect width="100%%" height="100%%" '
                'fill="#ffffff"/>\n%s\n</svg>\n' % (WIDTH, height, WIDTH, height, FONT,
                                                   "\n".join(self.parts)))


def nice_limit(v):
    """The axis end above v: 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 x 10^k."""
    k = 10 ** math.floor(math.log10(v))
    for m in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if m * k >= v * 1.0001:
            return m * k
    return 10 * k


def draw_bars(svg, y, panels):
    left, right = 150, WIDTH - 24
    bar_h, gap = 18, 5
    for scenario, header, bars in panels:
        svg.add('<text x="24" y="%.1f" font-size="14" fill="%s"><tspan font-weight="bold">%s'
                '</tspan>  \u2014  %s</text>' % (y + 15, INK, escape(scenario), escape(header)))
        y += 26
        # An entry hundreds of times the ceiling (a library that polls, bench/run --python)
        # would leave the others a pixel wide: the axis then ends past the largest bar within
        # OFF_SCALE x, and the bars beyond it are cut, with a break and "off scale" on them.
        within = [b[2] for b in bars[:-1] if b[2] <= OFF_SCALE]
        top = max(within) if within and len(within) < len(bars) - 1 else \
            max(b[2] for b in bars)
        limit = nice_limit(max(top, 1.0) * 1.03)
        scale = (right - left) / limit
        # The ceiling's mark (behind the bars, so that it crosses no number) and the axis.
        bottom = y + len(bars) * (bar_h + gap) - gap
        svg.line(left + scale, y - 4, left + scale, bottom + 4, stroke=INK, width=1.2, dash="4,3")
        svg.line(left, y - 4, left, bottom + 4, stroke=INK, width=1)
        for name, colour, r, label in bars:
            svg.text(left - 8, y + bar_h - 5, name, size=13, anchor="end",
                     fill=MUTED if name == "ceiling" else INK)
            w = max(min(r, limit) * scale, 1.5)
            svg.rect(left, y, w, bar_h, colour)
            if r > limit:
                label += ", off scale"
            lw = text_width(label, 12.5) * 1.15  # bold, inside the bar: wider than the estimate
            if r > limit:
                for dx in (0, 6):  # the break: two white slashes, left of the figure
                    x = max(left + w - lw - 30, left + 8) + dx
                    svg.line(x, y + bar_h + 1, x + 6, y - 1, stroke="#ffffff", width=2.5)
            if lw + 12 <= w:
                fill = "#ffffff" if colour in (PALETTE[0], PALETTE[2], CEILING_COLOUR) else INK
                svg.text(left + w - 6, y + bar_h - 5, label, size=12.5, anchor="end", fill=fill,
                         weight="bold")
            else:
                svg.text(left + w + 5, y + bar_h - 5, label, size=12.5, fill=INK)
            y += bar_h + gap
        y += 14
    return y


def log_ticks(lo, hi):
    """1-2-5 values from below lo to above hi."""
    out = []
    k = math.floor(math.log10(lo))
    while True:
        for m in (1, 2, 5):
            v = m * 10 ** k
            if v > hi * 1.0001:
                return out
            if v >= lo / 1.0001:
                out.append(v)
        k += 1


def tick_label(us):
    if us >= 1000:
        return "%g ms" % (us / 1000)
    return "%g \u00b5s" % us


def draw_cdf(svg, x0, y0, w, h, title, what, series, reference, missing):
    """One CDF plot whose outer box's top left is (x0, y0)."""
    svg.text(x0, y0 + 15, title, size=14, weight="bold")
    pl, pt = x0 + 44, y0 + 44           # plot area; the ceiling's label goes above it
    pw, ph = w - 44 - 26, h - 44 - 48
    svg.rect(pl, pt, pw, ph, "#ffffff", 'stroke="%s"' % INK)
    for q in (0, 0.25, 0.5, 0.75, 0.9, 0.99, 1):
        yq = pt + ph * (1 - q)
        if 0 < q < 1:
            svg.line(pl, yq, pl + pw, yq, stroke=GRID, dash="" if q in (0.25, 0.5, 0.75) else "2,3")
        if q not in (0.9, 0.99):
            svg.text(pl - 6, yq + 4.5, "%g" % q, size=12, anchor="end")
    # Right of the frame, where nothing else goes.
    svg.text(pl + pw + 4, pt + ph * 0.01 + 6, "p99", size=11, fill=MUTED)
    svg.text(pl + pw + 4, pt + ph * 0.1 + 4, "p90", size=11, fill=MUTED)
    svg.text(x0 + 10, pt + ph / 2, "fraction of " + what, size=12, anchor="middle",
             extra='transform="rotate(-90 %.1f %.1f)"' % (x0 + 10, pt + ph / 2))
    if not series:
        svg.text(pl + pw / 2, pt + ph / 2 - 8, "no distribution in this run's data", size=14,
                 anchor="middle", fill=MUTED, weight="bold")
        svg.text(pl + pw / 2, pt + ph / 2 + 12, missing, size=12, anchor="middle", fill=MUTED)
        svg.text(pl + pw / 2, pt + ph + 38, "\u00b5s (log scale)", size=12, anchor="middle")
        return
    values = [us for *_, points in series for _, us in points]
    if reference:
        values.append(reference[0])
    lo, hi = min(values), max(values)
    llo, lhi = math.log10(lo) - 0.03, math.log10(hi) + 0.03

    def xs(us):
        return pl + pw * (math.log10(us) - llo) / (lhi - llo)

    ticks = log_ticks(10 ** llo, 10 ** lhi)
    taken = []  # labelled spans: the decades first, then a 2 or a 5 wherever one fits
    for v in sorted(ticks, key=lambda v: (round(math.log10(v), 9) % 1 != 0, v)):
        x = xs(v)
        decade = abs(math.log10(v) - round(math.log10(v))) < 1e-9
        svg.line(x, pt, x, pt + ph, stroke=GRID if decade else "#eeeeee")
        svg.line(x, pt + ph, x, pt + ph + (5 if decade else 3), stroke=INK)
        label = tick_label(v)
        half = text_width(label, 12) / 2
        if x + half <= pl + pw + 24 and all(x + half + 8 < a or x - half - 8 > b
                                            for a, b in taken):
            svg.text(x, pt + ph + 18, label, size=12, anchor="middle")
            taken.append((x - half, x + half))
    svg.text(pl + pw / 2, pt + ph + 38, "\u00b5s (log scale)", size=12, anchor="middle")
    if reference:
        x = xs(reference[0])
        svg.line(x, pt, x, pt + ph, stroke=CEILING_COLOUR, width=1.5, dash="5,4")
        label = "%s = %s" % (reference[1], number(reference[0], "us"))
        # Above the frame, where no curve goes, centred on the line as far as the frame allows.
        half = text_width(label, 11.5) / 2
        cx = min(max(x, pl + half), pl + pw - half)
        svg.text(cx, pt - 6, label, size=11.5, anchor="middle", fill=MUTED)
    for name, colour, dash, rep, points in series:
        d = " ".join("%s%.1f,%.1f" % ("M" if i == 0 else "L", xs(us), pt + ph * (1 - q))
                     for i, (q, us) in enumerate(points))
        svg.add('<path d="%s" fill="none" stroke="%s" stroke-width="2.4" '
                'stroke-linejoin="round"%s/>' %
                (d, colour, ' stroke-dasharray="%s"' % dash if dash else ""))
        # The quantiles themselves: between two of them the line is only a guess.
        for q, us in points:
            svg.add('<circle cx="%.1f" cy="%.1f" r="2.3" fill="%s"/>' %
                    (xs(us), pt + ph * (1 - q), colour))
    # Legend, bottom right (a CDF leaves that corner empty).
    rows = [("%s (rep %s)" % (name, rep) if rep is not None else name, colour, dash)
            for name, colour, dash, rep, _ in series]
    lw = max(text_width(r[0], 12) for r in rows) + 44
    lx, ly = pl + pw - lw - 8, pt + ph - 10 - 18 * len(rows)
    svg.rect(lx, ly, lw, 18 * len(rows) + 6, "#ffffff", 'fill-opacity="0.9" stroke="%s"' % GRID)
    for i, (label, colour, dash) in enumerate(rows):
        yy = ly + 14 + 18 * i
        svg.line(lx + 6, yy - 4, lx + 32, yy - 4, stroke=colour, width=2.4, dash=dash)
        svg.text(lx + 38, yy, label, size=12)


def draw(lines, title=None, server=None, machine=None, when=None, source=None):
    """The chart's SVG text."""
    shown = entries(lines)
    server = server_of(lines, server)
    peers = [n for lib, _, n in shown if lib != "relock"]
    reps = max((l.get("rep") or 0 for l in lines), default=0)
    svg = Svg()
    y = 34
    if any(lib == "relock-python" for lib, _, _ in shown):  # every name would not fit
        title = title or "relock, relock-python and their peers vs the ceiling, on %s" % server
    svg.text(24, y, title or "relock vs %s vs the ceiling, on %s" % (
        " vs ".join(peers) if peers else "its ceiling", server), size=21, weight="bold")
    y += 22
    sub = [s for s in (machine, when, "medians of %d repetition%s" % (reps, "s" if reps > 1 else "")
                       if reps else None) if s]
    if sub:
        svg.text(24, y, " \u00b7 ".join(sub), size=13, fill=MUTED)
        y += 18
    svg.text(24, y, "Ceiling: what %s itself allows on this machine, measured in the same run "
             "(redis-benchmark or a raw loop)." % server, size=13, fill=MUTED)
    y += 30

    panels = bar_panels(lines, shown)
    svg.text(24, y, "Headline figure per scenario, over the ceiling (dashed line = 1)",
             size=17, weight="bold")
    y += 10
    if panels:
        y = draw_bars(svg, y + 12, panels)
    else:
        svg.text(24, y + 24, "no scenario with a ceiling in this run's data", size=14,
                 fill=MUTED)
        y += 52
    y += 6

    svg.text(24, y, "Latency distribution (CDF)", size=17, weight="bold")
    y += 18
    series = [cdf_lines(lines, shown, c[0], c[1], c[2]) for c in CDFS]
    if any(series):
        svg.text(24, y, "Each line: the repetition whose p50 is the median of the entry's; the "
                 "dashed line is the scenario's ceiling.", size=13, fill=MUTED)
        y += 14
        h = 360
        w = (WIDTH - 24 * 2 - 20) / 2
        for i, (scenario, field, p50_field, ctitle, what) in enumerate(CDFS):
            ran = any(l.get("scenario") == scenario for l in lines)
            missing = ("(no %s field: drivers older than it)" % field) if ran else \
                "(%s did not run)" % scenario
            draw_cdf(svg, 24 + i * (w + 20), y, w, h, ctitle, what, series[i],
                     cdf_reference(lines, scenario), missing)
        y += h + 4
    else:
        svg.text(24, y + 2, "Missing: this run's lines carry no distribution (%s), so there is "
                 "none to draw." % ", ".join(c[1] for c in CDFS), size=13, weight="bold",
                 fill=MUTED)
        y += 22
    if source:
        svg.text(24, y, "Data: %s (bench/chart.py redraws it)" % source, size=11, fill=MUTED)
        y += 10
    return svg.document(int(y + 14))


def write(raw_path, svg_path, title=None, server=None, machine=None, when=None):
    """Reads a run's raw.jsonl and writes the chart to svg_path (written whole, then renamed)."""
    lines = read_lines(raw_path)
    text = draw(lines, title=title, server=server, machine=machine, when=when_text(when),
                source=os.path.basename(os.path.dirname(os.path.abspath(raw_path))) + "/" +
                os.path.basename(raw_path))
    tmp = svg_path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, svg_path)


def when_text(when):
    """"2026-11-28 04:04 UTC" from bench/run's stamp (20261128T040431Z); other text as given."""
    if when and re.fullmatch(r"\d{8}T\d{6}Z", when):
        t = datetime.datetime.strptime(when, "%Y%m%dT%H%M%SZ")
        return t.strftime("%Y-%m-%d %H:%M UTC")
    return when


def from_table(raw_path):
    """(server, machine) from the table.md beside raw.jsonl, whose summary line reads
    "3 repetitions, medians; redis 7.0.15; 2 CPUs (...), Linux ..., relock abc1234; pin ..."."""
    path = os.path.join(os.path.dirname(os.path.abspath(raw_path)), "table.md")
    try:
        with open(path) as f:
            for line in f:
                if re.match(r"^\d+ repetitions, medians; ", line):
                    parts = line.strip().split("; ")
                    return parts[1], parts[2] if len(parts) > 2 else None
    except OSError:
        pass
    return None, None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("raw", help="a run's raw.jsonl")
    ap.add_argument("out", help="the SVG to write")
    ap.add_argument("--title", help="replaces the title line")
    args = ap.parse_args(argv)
    server, machine = from_table(args.raw)
    stamp = os.path.basename(os.path.dirname(os.path.abspath(args.raw)))
    when = stamp if re.fullmatch(r"\d{8}T\d{6}Z", stamp) else \
        datetime.datetime.fromtimestamp(os.path.getmtime(args.raw), datetime.timezone.utc) \
        .strftime("%Y-%m-%d %H:%M UTC")
    write(args.raw, args.out, title=args.title, server=server, machine=machine, when=when)
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
