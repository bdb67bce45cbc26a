"""`compare tables`: the Markdown tables of a JSON document (the one
`compare plot` draws), and the check that a page's tables and pictures
show the document's numbers.

A page marks each generated table with a line `<!-- compare tables: NAME -->`
right above it (NAME: latency, rate, bandwidth or intra_node); the table
runs to the next blank line. --check PAGE compares every marked table with
the one the document gives, --svg DIR compares the values each SVG carries
(<desc id="plot-data">, written by `compare plot`) with the document's,
--write PAGE rewrites the marked tables from the document.
"""
import argparse
import difflib
import json
import os
import re
import sys

from . import common, plot
from .common import die
from .output import markdown_row, markdown_rule

MARK = "<!-- compare tables: {} -->"
MARK_RE = re.compile(r"^<!-- compare tables: ([a-z_]+) -->$")


def cell(v, digits):
    return "n/a" if v is None else f"{v:,.{digits}f}"


def size_label(b):
    for unit, name in ((1 << 20, "MiB"), (1 << 10, "KiB")):
        if b >= unit and b % unit == 0:
            return f"{b // unit} {name}"
    return f"{b} B"


def _ratio_cells(section, i, digits=2):
    """The ratio columns a section asks for ("ratios": [[numerator,
    denominator], ...]) at point i."""
    out = []
    for num, den in section.get("ratios") or []:
        a, b = section["series"][num][i], section["series"][den][i]
        out.append(cell(a / b if a is not None and b else None, digits))
    return out


def _ratio_heads(section):
    return [f"{num} / {den}" for num, den in section.get("ratios") or []]


def _series_table(section, xs, first_head, x_label, unit):
    names = list(section["series"])
    digits = section.get("digits", 3)
    heads = [first_head] + [f"{n} ({unit})" for n in names] + _ratio_heads(section)
    extra = section.get("latency_us") or {}
    heads += [f"{n} latency (us)" for n in extra]
    rows = [markdown_row(heads), "|---:|" + "---:|" * (len(heads) - 1)]
    for i, x in enumerate(xs):
        rows.append(markdown_row(
            [x_label(x)] + [cell(section["series"][n][i], digits) for n in names] +
            _ratio_cells(section, i) +
            [cell(extra[n][i], section.get("latency_digits", 1)) for n in extra]))
    return rows


def markdown_tables(doc):
    """{name: [lines of the Markdown table]} of every table doc holds."""
    out = {}
    lat = doc.get("latency")
    if lat and lat.get("sizes"):
        out["latency"] = _series_table(lat, lat["sizes"], "size (one-way latency, lower is better)",
                                       size_label, "us")
    rate = doc.get("rate")
    if rate and rate.get("threads"):
        out["rate"] = _series_table(rate, rate["threads"],
                                    "threads per rank (message rate, higher is better)", str,
                                    "Mmsg/s")
    bw = doc.get("bandwidth")
    if bw and bw.get("sizes"):
        out["bandwidth"] = _series_table(bw, bw["sizes"],
                                         "size (bandwidth: higher is better; latency: lower)",
                                         size_label, "GB/s")
    figures = doc.get("figures") or []
    if figures:
        columns = list(doc.get("columns") or figures[0]["values"])
        rows = [markdown_row(["figure"] + columns), markdown_rule(len(columns))]
        for f in figures:
            better = "higher" if f["higher_is_better"] else "lower"
            rows.append(markdown_row([f"{f['label']} ({f['unit']}, {better} is better)"] +
                                     [cell(f["values"].get(c), f.get("digits", 3))
                                      for c in columns]))
        out["intra_node"] = rows
    return out


def page_tables(lines):
    """{name: (index of the first table line, [table lines])} of the marked
    tables of a page."""
    found = {}
    for i, line in enumerate(lines):
        m = MARK_RE.match(line.strip())
        if not m:
            continue
        j = i + 1
        while j < len(lines) and lines[j].strip():
            j += 1
        found[m.group(1)] = (i + 1, lines[i + 1:j])
    return found


def _normal(data):
    """The values as JSON would give them back (tuples as lists)."""
    return json.loads(json.dumps(data, sort_keys=True))


def check_page(doc, path, source):
    """Differences between the page's marked tables and the document's, as
    messages."""
    with open(path) as f:
        lines = f.read().splitlines()
    want, have = markdown_tables(doc), page_tables(lines)
    problems = []
    for name, rows in want.items():
        if name not in have:
            problems.append(f"{path} has no table marked {MARK.format(name)} ({source} has one)")
        elif have[name][1] != rows:
            diff = "\n".join(difflib.unified_diff(rows, have[name][1], source, path, lineterm=""))
            problems.append(f"{path}: the table '{name}' differs from {source}:\n{diff}")
    for name in have:
        if name not in want:
            problems.append(f"{path} marks a table '{name}' that {source} does not hold")
    return problems


def check_svgs(doc, svg_dir, source):
    """Differences between the values the SVGs carry and the document's."""
    problems = []
    for base, data in plot.plot_data(doc).items():
        path = os.path.join(svg_dir, base + ".svg")
        if not os.path.isfile(path):
            problems.append(f"{path} is missing ({source} holds its data)")
            continue
        drawn = plot.svg_data(path)
        if drawn is None:
            problems.append(f"{path} carries no values (draw it with `compare plot {source}`)")
        elif drawn != _normal(data):
            problems.append(f"{path} draws other values than {source}: drawn "
                            f"{json.dumps(drawn, sort_keys=True)}, data "
                            f"{json.dumps(_normal(data), sort_keys=True)}")
    return problems


def write_page(doc, path):
    with open(path) as f:
        lines = f.read().splitlines()
    want = markdown_tables(doc)
    # From the last table up, so that earlier indices stay valid.
    for name, (start, rows) in sorted(page_tables(lines).items(), key=lambda x: -x[1][0]):
        if name in want:
            lines[start:start + len(rows)] = want[name]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def run(argv):
    ap = argparse.ArgumentParser(
        prog=common.PROG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="prints the Markdown tables of a JSON document (what `compare plot` "
                    "draws), or checks that a page's tables and the SVGs beside them show "
                    "its numbers", epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("json", metavar="JSON", help="the document")
    ap.add_argument("--check", metavar="PAGE",
                    help="compare the page's marked tables with the document's; exit 1 if "
                         "any differs")
    ap.add_argument("--svg", metavar="DIR",
                    help="compare the values the SVGs in DIR carry with the document's; exit "
                         "1 if any differs")
    ap.add_argument("--write", metavar="PAGE", help="rewrite the page's marked tables")
    g = ap.add_argument_group("output (the same in every subcommand)")
    g.add_argument("--out", metavar="DIR",
                   help="also write each table to DIR/NAME.md")
    a = ap.parse_args(argv)
    try:
        with open(a.json) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        die(f"cannot read {a.json}: {e}")
    source = a.json
    if a.write:
        write_page(doc, a.write)
        print(f"# rewrote the marked tables of {a.write} from {source}")
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        for name, rows in markdown_tables(doc).items():
            with open(os.path.join(a.out, name + ".md"), "w") as f:
                f.write("\n".join(rows) + "\n")
    if not (a.check or a.svg or a.write):
        for name, rows in markdown_tables(doc).items():
            print(MARK.format(name))
            print("\n".join(rows))
            print()
        return
    problems = []
    if a.check:
        problems += check_page(doc, a.check, source)
    if a.svg:
        problems += check_svgs(doc, a.svg, source)
    for p in problems:
        print(f"{common.PROG}: {p}", file=sys.stderr)
    if problems:
        sys.exit(1)
    checked = [x for x in (a.check and f"the tables of {a.check}",
                           a.svg and f"the SVGs in {a.svg}") if x]
    print(f"# {' and '.join(checked)} agree with {source}" if checked else "")
