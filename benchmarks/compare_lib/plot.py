"""Pictures of the comparisons, drawn by gnuplot as SVG and PNG.

Three plots, each from a JSON document that `all`/`rate` (compare.json in
--out) and `shm-table` (--json FILE) write:
  latency_vs_size   one-way latency against message size, one line per
                    implementation (`all`: raw libfabric, LCI, MPI);
  rate_vs_threads   total message rate against threads per rank (`all`,
                    `rate`: raw, LCI shared device, LCI device per thread, MPI);
  intra_node        the shm-table figures (latency and message rate) of raw
                    libfabric shm, LCI over libfabric shm, LCI native, MPICH
                    and UCX as grouped bars.
`compare plot JSON... --out DIR` draws every plot the documents hold;
`--plot DIR` on all, rate and shm-table draws them at the end of the run.

The JSON documents: {"kind": "compare" | "shm-table", "context": {...},
"latency": {"sizes": [...], "series": {name: [us or null per size]}},
"rate": {"threads": [...], "series": {name: [Mmsg/s or null]}},
"figures": [{"key", "label", "unit", "higher_is_better",
"values": {column label: value or null}}]}.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

from . import common
from .common import die

# Units of the shm-table figures drawn, and the panel each goes to.
INTRA_NODE_PANELS = (("latency", "us"), ("rate", "Mmsg/s"))


def write_json(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
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


def _title(main, doc):
    """A two-line title: what is drawn, then where and when it was measured."""
    under = _context_line(doc).replace("\\", "").replace('"', "'")
    return '"' + main.replace('"', "'") + ("\\n" + under if under else "") + '"'


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


def _lines_script(out, base, title, xlabel, ylabel, dat, names, logy):
    plot = "plot " + ", ".join(
        f"{_quote(dat) if i == 0 else chr(39) * 2} u 1:{i + 2} w lp lw 2 pt {i + 5} t {_quote(n)}"
        for i, n in enumerate(names))
    head = (f"set title {title} noenhanced\nset xlabel {_quote(xlabel)}\n"
            f"set ylabel {_quote(ylabel)}\nset grid\nset key outside right top noenhanced\n"
            "set logscale x 2\n" + ("set logscale y\n" if logy else "unset logscale y\n"))
    return "".join(head + t + plot + "\n" for t in _terminals(out, base))


def _series_rows(xs, series):
    names = list(series)
    return names, [[x] + [series[n][i] for n in names] for i, x in enumerate(xs)]


def _context_line(doc):
    c = doc.get("context", {})
    return ", ".join(x for x in (c.get("date"), c.get("machine"), c.get("provider")) if x)


def latency_vs_size(doc, out):
    lat = doc.get("latency")
    if not lat or not lat.get("sizes"):
        return []
    names, rows = _series_rows(lat["sizes"], lat["series"])
    dat = _dat(os.path.join(out, "latency_vs_size.dat"), rows)
    title = _title("One-way latency (ping-pong / 2)", doc)
    return [("latency_vs_size", _lines_script(out, "latency_vs_size", title,
                                              "message size (bytes)", "microseconds",
                                              dat, names, True))]


def rate_vs_threads(doc, out):
    rate = doc.get("rate")
    if not rate or not rate.get("threads"):
        return []
    names, rows = _series_rows(rate["threads"], rate["series"])
    dat = _dat(os.path.join(out, "rate_vs_threads.dat"), rows)
    title = _title(f"Message rate, {rate.get('size', 8)} B, window {rate.get('window', 64)}",
                   doc)
    return [("rate_vs_threads", _lines_script(out, "rate_vs_threads", title,
                                              "threads per rank",
                                              "million messages/s (both ranks)",
                                              dat, names, False))]


def intra_node(doc, out):
    """Grouped bars: one group per figure, one bar per column; a panel per
    unit (latency in us on a log scale, message rate in Mmsg/s)."""
    figures = doc.get("figures") or []
    if not figures:
        return []
    columns = list(doc.get("columns") or figures[0]["values"])
    scripts = []
    for panel, unit in INTRA_NODE_PANELS:
        figs = [f for f in figures if f["unit"] == unit]
        if not figs:
            continue
        base = f"intra_node_{panel}"
        rows = [[_short(f["label"])] + [f["values"].get(c) for c in columns] for f in figs]
        dat = _dat(os.path.join(out, base + ".dat"), rows)
        better = "lower" if not figs[0]["higher_is_better"] else "higher"
        title = _title(f"Intra-node {panel} ({unit}, {better} is better)", doc)
        plot = "plot " + ", ".join(
            f"{_quote(dat) if i == 0 else chr(39) * 2} u {i + 2}:xtic(1) t {_quote(c)}"
            for i, c in enumerate(columns))
        head = (f"set title {title} noenhanced\nset ylabel {_quote(unit)}\n"
                "set style data histogram\nset style histogram clustered gap 1\n"
                "set style fill solid 0.85 border -1\nset boxwidth 0.9\nset grid ytics\n"
                "set key outside right top noenhanced\nset xtics noenhanced\n"
                + ("set logscale y\n" if unit == "us" else "set yrange [0:*]\n"))
        scripts.append((base, "".join(head + t + plot + "\n" for t in _terminals(out, base))))
    return scripts


def draw(doc, out, gnuplot=None):
    """Draws every plot doc holds into out; returns the files written, or
    [] without gnuplot (with one line saying so)."""
    gp = gnuplot or shutil.which("gnuplot")
    if not gp:
        print(f"# {common.PROG}: gnuplot not found: no plots (Debian: apt-get install gnuplot-nox)")
        return []
    os.makedirs(out, exist_ok=True)
    written = []
    for base, script in latency_vs_size(doc, out) + rate_vs_threads(doc, out) + intra_node(doc, out):
        r = subprocess.run([gp], input=script, text=True, capture_output=True)
        if r.returncode != 0:
            print(f"# {common.PROG}: gnuplot failed on {base}: {r.stderr.strip()[-300:]}",
                  file=sys.stderr)
            continue
        written += [os.path.join(out, base + ext) for ext in (".svg", ".png")]
    if written:
        print(f"# wrote {' '.join(written)} (gnuplot)")
    return written


def run(argv):
    ap = argparse.ArgumentParser(
        prog=common.PROG,
        description="Draws the plots (SVG and PNG, with gnuplot) of JSON documents that "
                    "`compare all`/`compare rate` (compare.json in --out) and "
                    "`compare shm-table --json FILE` write: latency_vs_size, rate_vs_threads, "
                    "intra_node_latency and intra_node_rate.")
    ap.add_argument("json", nargs="+", metavar="JSON", help="documents to draw")
    ap.add_argument("--out", default=".", help="directory of the pictures (default .)")
    a = ap.parse_args(argv)
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
