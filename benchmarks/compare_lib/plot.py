"""Pictures of the comparisons, drawn by gnuplot as SVG and PNG.

Five plots, each from a JSON document that `all`/`rate` (compare.json in
--out), `latency`, `bandwidth` and `shm-table` write (--json FILE, or in
--out):
  latency_vs_size    one-way latency against message size, one line per
                     implementation (`all`: raw libfabric, LCI, MPI;
                     `latency`: raw libfabric, LCI);
  rate_vs_threads    total message rate against threads per rank (`all`,
                     `rate`: raw, LCI shared device, LCI device per thread,
                     MPI), the threads beyond the machine's cores shaded;
  bandwidth_vs_size  long-message bandwidth against size (`bandwidth`);
  intra_node_latency, intra_node_rate
                     the shm-table figures of raw libfabric shm, LCI over
                     libfabric shm, LCI native, MPICH and UCX as grouped bars.
Every title says whether lower or higher is better; where the document
holds the smallest and largest repetition of a figure ("spread"), the plot
draws them as a bar around the point. Each SVG carries the values it draws
as JSON in <desc id="plot-data">, so a test can check a picture against the
table beside it (`compare tables --check`).
`compare plot JSON... --out DIR` draws every plot the documents hold;
--plot DIR (or --out DIR) on all, rate, latency, bandwidth and shm-table
draws them at the end of the run.

The JSON documents: {"kind", "context": {"date", "machine", "provider",
"cores"}, "latency": {"sizes": [...], "series": {name: [us or null per
size]}, "spread": {name: [[min, max] or null per size]}}, "rate":
{"threads": [...], "series", "spread"}, "bandwidth": {"sizes", "series"
(GB/s), "spread", "latency_us"}, "figures": [{"key", "label", "unit",
"higher_is_better", "digits", "values": {column: value or null}, "spread":
{column: [min, max] or null}}]}; "spread" is optional everywhere.
"""
import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys

from . import common
from .common import die
from .output import human_size

# Units of the shm-table figures drawn, and the panel each goes to.
INTRA_NODE_PANELS = (("latency", "us"), ("rate", "Mmsg/s"))

# The element of an SVG that holds the values drawn.
DATA_ID = "plot-data"


def write_json(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)  # in the order drawn and tabulated
        f.write("\n")
    return path


def _dat(path, rows):
    with open(path, "w") as f:
        for row in rows:
            f.write(" ".join("NaN" if v is None else (f'"{v}"' if isinstance(v, str) else str(v))
                             for v in row) + "\n")
    return path


def _quote(text):
    return "'" + str(text).replace("'", "''") + "'"


def _title(main, doc, note=""):
    """A title of up to three lines: what is drawn, what the bars are, then
    where and when it was measured."""
    lines = [main, note, _context_line(doc).replace("\\", "")]
    return '"' + "\\n".join(x.replace('"', "'") for x in lines if x) + '"'


def better(higher):
    return "higher is better" if higher else "lower is better"


def _short(label):
    """A figure's label short enough for a tick under its bars."""
    for long, short in (("one-way latency", "latency"), ("message rate", "rate"),
                        (", window 64", "")):
        label = label.replace(long, short)
    return label


def _terminals(out, base):
    """gnuplot lines that draw the same plot as SVG, then as PNG; the plot
    command follows each."""
    return [("set terminal svg size 900,560 dynamic enhanced font 'Helvetica,13'\n"
             f"set output {_quote(os.path.join(out, base + '.svg'))}\n"),
            ("set terminal png size 900,560\n"
             f"set output {_quote(os.path.join(out, base + '.png'))}\n")]


def _context_line(doc):
    c = doc.get("context", {})
    return ", ".join(x for x in (c.get("date"), c.get("machine"), c.get("provider")) if x)


def _bounds(value, rng):
    """(value, low, high) of one point: the spread's ends, or the value
    itself twice where the document has no spread."""
    if value is None:
        return (None, None, None)
    if not rng or rng[0] is None or rng[1] is None:
        return (value, value, value)
    return (value, rng[0], rng[1])


def _has_spread(spread):
    """Whether any point has repetitions that differ."""
    return any(r and r[0] != r[1] for rs in (spread or {}).values() for r in rs)


def line_data(base, xs, section):
    """What a line plot draws: {"plot", "x", "series", "spread"}; a series
    without any value (an implementation left out) is not drawn."""
    spread = section.get("spread") or {}
    names = [n for n, v in section["series"].items() if any(x is not None for x in v)]
    return {"plot": base, "x": list(xs), "series": {n: list(section["series"][n]) for n in names},
            "spread": {n: list(spread.get(n) or [None] * len(xs)) for n in names}}


def _bound_rows(keys, data, names):
    """One row per key: the key, then value, low and high of each series."""
    rows = []
    for i, key in enumerate(keys):
        row = [key]
        for n in names:
            row += _bounds(data["series"][n][i], data["spread"][n][i])
        rows.append(row)
    return rows


def _lines_script(out, data, title, xlabel, ylabel, logy, extra=""):
    """A line per series with its spread bars (yerrorlines: x, value, low,
    high)."""
    names = list(data["series"])
    rows = _bound_rows(data["x"], data, names)
    dat = _dat(os.path.join(out, data["plot"] + ".dat"), rows)
    plot = "plot " + ", ".join(
        f"{_quote(dat) if i == 0 else chr(39) * 2} u 1:{3 * i + 2}:{3 * i + 3}:{3 * i + 4} "
        f"w yerrorlines lw 2 pt {i + 5} t {_quote(n)}"
        for i, n in enumerate(names))
    head = (f"set title {title} noenhanced\nset xlabel {_quote(xlabel)}\n"
            f"set ylabel {_quote(ylabel)}\nset grid\nset key outside right top noenhanced\n"
            "set logscale x 2\n" + ("set logscale y\n" if logy else "set yrange [0:*]\n") +
            "set xtics (" + ", ".join(f"{_quote(human_size(x) if 'bytes' in xlabel else x)} {x}"
                                      for x in data["x"]) + ")\n" + extra)
    return "".join(head + t + plot + "\n" for t in _terminals(out, data["plot"]))


def _spread_note(data):
    return ("error bars: smallest and largest repetition" if _has_spread(data["spread"])
            else "no spread (one repetition, or medians only)")


def latency_vs_size(doc, out):
    lat = doc.get("latency")
    if not lat or not lat.get("sizes"):
        return []
    data = line_data("latency_vs_size", lat["sizes"], lat)
    title = _title(f"One-way latency (ping-pong / 2), {better(False)}", doc, _spread_note(data))
    return [(data, _lines_script(out, data, title, "message size (bytes)", "microseconds",
                                 True))]


def bandwidth_vs_size(doc, out):
    bw = doc.get("bandwidth")
    if not bw or not bw.get("sizes"):
        return []
    data = line_data("bandwidth_vs_size", bw["sizes"], bw)
    title = _title(f"Long-message bandwidth, window {bw.get('window', 16)}, {better(True)}",
                   doc, _spread_note(data))
    return [(data, _lines_script(out, data, title, "message size (bytes)",
                                 "GB/s (1e9 bytes/s)", False))]


def _cores_mark(doc, threads):
    """gnuplot lines that shade the thread counts above the machine's cores
    (context "cores"), with a label; nothing if no count exceeds them."""
    cores = (doc.get("context") or {}).get("cores")
    if not cores or max(threads) <= cores:
        return ""
    return (f"set object 1 rect from {cores}, graph 0 to graph 1, graph 1 behind "
            "fc rgb '#e8e8e8' fs solid 1.0 noborder\n"
            f"set arrow 1 from {cores}, graph 0 to {cores}, graph 1 nohead dt 2 lc rgb 'gray40'\n"
            f"set label 1 {_quote(f'threads > {cores} cores')} at {cores}, graph 0.96 "
            "offset 0.5,0 left noenhanced\n")


def rate_vs_threads(doc, out):
    rate = doc.get("rate")
    if not rate or not rate.get("threads"):
        return []
    data = line_data("rate_vs_threads", rate["threads"], rate)
    data["cores"] = (doc.get("context") or {}).get("cores")
    title = _title(f"Message rate, {rate.get('size', 8)} B, window {rate.get('window', 64)}, "
                   f"{better(True)}", doc, _spread_note(data))
    return [(data, _lines_script(out, data, title, "threads per rank",
                                 "million messages/s (both ranks)", False,
                                 _cores_mark(doc, rate["threads"])))]


def intra_node_data(doc):
    """What the intra-node bars draw, a panel per unit: [{"plot", "groups",
    "higher_is_better", "series": {column: [value per figure]}, "spread"}]."""
    figures = doc.get("figures") or []
    if not figures:
        return []
    columns = list(doc.get("columns") or figures[0]["values"])
    panels = []
    for panel, unit in INTRA_NODE_PANELS:
        figs = [f for f in figures if f["unit"] == unit]
        if not figs:
            continue
        panels.append({"plot": f"intra_node_{panel}", "unit": unit,
                       "groups": [_short(f["label"]) for f in figs],
                       "higher_is_better": bool(figs[0]["higher_is_better"]),
                       "series": {c: [f["values"].get(c) for f in figs] for c in columns
                                  if any(f["values"].get(c) is not None for f in figs)},
                       "spread": {c: [(f.get("spread") or {}).get(c) for f in figs]
                                  for c in columns
                                  if any(f["values"].get(c) is not None for f in figs)}})
    return panels


def intra_node(doc, out):
    """Grouped bars: one group per figure, one bar per column, each with its
    spread; a panel per unit (latency in us on a log scale, message rate in
    Mmsg/s)."""
    scripts = []
    for data in intra_node_data(doc):
        base, unit = data["plot"], data["unit"]
        names = list(data["series"])
        rows = _bound_rows(data["groups"], data, names)
        dat = _dat(os.path.join(out, base + ".dat"), rows)
        panel = base[len("intra_node_"):]
        title = _title(f"Intra-node {panel} ({unit}), {better(data['higher_is_better'])}", doc,
                       _spread_note(data))
        plot = "plot " + ", ".join(
            f"{_quote(dat) if i == 0 else chr(39) * 2} u {3 * i + 2}:{3 * i + 3}:{3 * i + 4}"
            f":xtic(1) t {_quote(n)}"
            for i, n in enumerate(names))
        head = (f"set title {title} noenhanced\nset ylabel {_quote(unit)}\n"
                "set style data histogram\nset style histogram errorbars gap 1 lw 1\n"
                "set style fill solid 0.85 border -1\nset boxwidth 0.9\nset grid ytics\n"
                "set key outside right top noenhanced\nset xtics noenhanced\n"
                + ("set logscale y\n" if unit == "us" else "set yrange [0:*]\n"))
        scripts.append((data, "".join(head + t + plot + "\n" for t in _terminals(out, base))))
    return scripts


def plot_data(doc):
    """{base: the values that plot draws} of every plot doc holds: what the
    SVG carries, and what `compare tables --check` compares it with."""
    out = {}
    for key, base in (("latency", "latency_vs_size"), ("rate", "rate_vs_threads"),
                      ("bandwidth", "bandwidth_vs_size")):
        section = doc.get(key)
        if section and (section.get("sizes") or section.get("threads")):
            data = line_data(base, section.get("sizes") or section.get("threads"), section)
            if key == "rate":
                data["cores"] = (doc.get("context") or {}).get("cores")
            out[base] = data
    for data in intra_node_data(doc):
        out[data["plot"]] = data
    return out


def svg_data(path):
    """The values an SVG written by draw carries (None if it carries none)."""
    with open(path) as f:
        m = re.search(r'<desc id="' + DATA_ID + r'">(.*?)</desc>', f.read(), re.S)
    return json.loads(html.unescape(m.group(1))) if m else None


def _embed(path, data):
    """Puts the values drawn into the SVG, as JSON in a <desc> element
    after the opening <svg> tag."""
    with open(path) as f:
        svg = f.read()
    text = html.escape(json.dumps(data, sort_keys=True), quote=False)
    svg = re.sub(r"(<svg\b[^>]*>)", lambda m: m.group(1) + f'\n<desc id="{DATA_ID}">{text}</desc>',
                 svg, count=1)
    with open(path, "w") as f:
        f.write(svg)


def draw(doc, out, gnuplot=None):
    """Draws every plot doc holds into out; returns the files written, or
    [] without gnuplot (with one line saying so)."""
    gp = gnuplot or shutil.which("gnuplot")
    if not gp:
        print(f"# {common.PROG}: gnuplot not found: no plots (Debian: apt-get install gnuplot-nox)")
        return []
    os.makedirs(out, exist_ok=True)
    written = []
    for data, script in (latency_vs_size(doc, out) + rate_vs_threads(doc, out) +
                         bandwidth_vs_size(doc, out) + intra_node(doc, out)):
        base = data["plot"]
        r = subprocess.run([gp], input=script, text=True, capture_output=True)
        if r.returncode != 0:
            print(f"# {common.PROG}: gnuplot failed on {base}: {r.stderr.strip()[-300:]}",
                  file=sys.stderr)
            continue
        _embed(os.path.join(out, base + ".svg"), data)
        written += [os.path.join(out, base + ext) for ext in (".svg", ".png")]
    if written:
        print(f"# wrote {' '.join(written)} (gnuplot)")
    return written


def run(argv):
    ap = argparse.ArgumentParser(
        prog=common.PROG,
        description="Draws the plots (SVG and PNG, with gnuplot) of JSON documents that "
                    "`compare all`/`compare rate` (compare.json in --out) and "
                    "`compare latency|bandwidth|shm-table --json FILE` write: latency_vs_size, "
                    "rate_vs_threads, bandwidth_vs_size, intra_node_latency and "
                    "intra_node_rate.")
    ap.add_argument("json", nargs="+", metavar="JSON", help="documents to draw")
    g = ap.add_argument_group("output (the same in every subcommand)")
    g.add_argument("--out", metavar="DIR", default=".",
                   help="directory of the pictures (default .)")
    g.add_argument("--plot", metavar="DIR", help="the same as --out")
    a = ap.parse_args(argv)
    a.out = a.plot or a.out
    written = []
    for path in a.json:
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            die(f"cannot read {path}: {e}")
        written += draw(doc, a.out)
    if not written:
        die("nothing drawn", 1)
