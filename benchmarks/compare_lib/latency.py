"""`compare latency`: ofi_pingpong against lci_pingpong, short/medium
one-way latency and the 8-byte message rate, with LCI/raw."""
import argparse
import os
import platform
import sys
import time

from . import common
from .common import (add_output_options, default_build_dir, die, positive_int, provider_env,
                     seconds, utc_now, write_outputs)
from .output import fmt
from .runner import alternating, kept_runs, pair_command, programs, run_or_fail, timing_args
from .stats import config_lines, count_capped, median_or_none, parse_csv, ratio, value_range

EPILOG = """\
Runs `lcrun -n 2 ofi_pingpong --csv` and `lcrun -n 2 lci_pingpong --csv`
back to back R times over one libfabric provider and prints the medians:
one-way latency (us) for LCI_sends (short, 32 B) and LCI_sendm (medium,
8 B .. LCI_MEDIUM_SIZE), and the 8-byte message rate (million messages/s),
each next to the raw-libfabric figure and the ratio LCI/raw. Options after
`--` go to both programs.

Environment: FI_PROVIDER (default shm; an existing value is honoured; for
tcp, FI_TCP_IFACE defaults to lo), LCI_BUILD_DIR. Targets (reported, not
asserted): 8-byte latency <= 1.2x raw, message rate >= 0.8x raw."""

# The raw program's largest size until the first LCI run tells LCI's.
DEFAULT_MEDIUM_SIZE = 12224


def build_parser():
    ap = argparse.ArgumentParser(
        prog="compare latency", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="short/medium ping-pong latency and 8-byte message rate: LCI against raw "
                    "libfabric", epilog=EPILOG)
    ap.add_argument("--build-dir", default=default_build_dir(),
                    help="build tree holding benchmarks/ and tools/lcrun "
                         "(default: $LCI_BUILD_DIR, else the tree this script is in)")
    ap.add_argument("--reps", type=positive_int, default=3, help="runs of each program (default 3)")
    ap.add_argument("--comp", choices=("sync", "queue", "handler"), default="sync",
                    help="LCI completion (default sync)")
    ap.add_argument("--pick", choices=("median", "best"), default="median",
                    help="figure over the repetitions: median (default) or best (lowest "
                         "latency, highest rate: what the machine does undisturbed, for a "
                         "machine shared with other work)")
    ap.add_argument("--iters", type=positive_int, default=10000,
                    help="timed ping-pong iterations per size (default 10000)")
    ap.add_argument("--warmup", type=int, default=1000,
                    help="warm-up iterations per size (default 1000)")
    ap.add_argument("--windows", type=positive_int, default=2000,
                    help="timed windows in the message-rate test (default 2000)")
    ap.add_argument("--window", type=positive_int, default=64,
                    help="messages per window (default 64)")
    ap.add_argument("--max-time", type=seconds, default=0.5,
                    help="time budget of one measurement in one run (default 0.5)")
    ap.add_argument("--stat", choices=("median", "mean"), default="median",
                    help="figure of one run: the median over batches of 64 round trips or 4 "
                         "windows (default, robust to a busy machine) or the mean")
    ap.add_argument("--no-pin", action="store_true",
                    help="do not pin the two ranks to separate CPUs")
    ap.add_argument("--timeout", type=positive_int, default=60,
                    help="wall-clock limit of each program run (default 60)")
    ap.add_argument("--keep", metavar="DIR", help="keep the raw CSV output of every run in DIR")
    ap.add_argument("extra", nargs="*", help=argparse.SUPPRESS)
    add_output_options(ap, json_name="latency.json")
    return ap


class pingpong_runs:
    """The R runs of both programs; the outputs go to a kept_runs."""

    def __init__(self, a, progs, env, runs):
        self.a, self.env, self.runs = a, env, runs
        self.bins = {"ofi": progs.bench("ofi_pingpong"), "lci": progs.bench("lci_pingpong")}
        self.lcrun = progs.lcrun()
        self.common = timing_args(a, ("iters", "warmup", "windows", "window", "max_time"))
        self.medium_size = DEFAULT_MEDIUM_SIZE

    def run_one(self, impl, rep):
        if impl == "ofi":
            own = ["--max-size", str(self.medium_size)]
        else:
            own = ["--comp", self.a.comp]
        cmd = pair_command(self.lcrun, self.bins[impl], self.common + own)
        return run_or_fail(self.runs, impl, rep, cmd + self.a.extra, self.env, self.a.timeout)

    def run_all(self):
        """The first LCI run tells the medium size (LCI_PACKET_SIZE may change
        it); the raw program then covers the same sizes. Later reps alternate
        the order so that drift over the run favours neither side."""
        for rep, impl in alternating(self.a.reps, ("lci", "ofi")):
            out = self.run_one(impl, rep)
            if rep == 1 and impl == "lci":
                self.medium_size = largest_medium(out)


def largest_medium(lci_output):
    sizes = [r["size"] for r in parse_csv(lci_output)
             if r["impl"] == "lci" and r["test"] == "medium"]
    size = max(sizes or [0])
    if size <= 0:
        die("lci_pingpong reported no medium sizes")
    return size


def print_header(a, texts, start):
    print(f"# machine: {os.cpu_count()} cores, {platform.system()} {platform.release()}; "
          f"{utc_now()}; runs: {int(time.time() - start)}s")
    for line in config_lines([texts["ofi", 1], texts["lci", 1]], ("# units", "# capped")):
        print(line)
    capped = count_capped(texts.values())
    if capped:
        print(f"# {capped} of the measurements reached --max-time {a.max_time:g} s first "
              "(their figure covers the iterations done)")
    print(f"# medians of {a.reps} runs; latency: one-way us; rate: million msg/s; "
          "ratio = LCI / raw")
    print()


def collect_rows(texts, reps):
    """(order, units, values): the (test, size) rows in the order the LCI
    runs print them, then any the raw runs add; their units; and {(impl,
    (test, size)): [value per run]}."""
    order, units, values = [], {}, {}
    for impl in ("lci", "ofi"):
        for rep in range(1, reps + 1):
            for r in parse_csv(texts[impl, rep]):
                if r["mode"]:
                    continue
                key = (r["test"], r["size"])
                if key not in units:
                    order.append(key)
                    units[key] = r["unit"]
                values.setdefault((impl, key), []).append(r["value"])
    return order, units, values


def print_table(order, units, values):
    """The table of medians and the targets line."""
    print(f"{'test':<8} {'size':>8} {'raw libfabric':>14} {'LCI':>14} {'LCI/raw':>10}  unit")
    lat8 = rate = "-"
    for key in order:
        raw = median_or_none(values.get(("ofi", key), []))
        lci = median_or_none(values.get(("lci", key), []))
        rt = fmt(ratio(lci, raw), 2) if raw and raw > 0 else "-"
        print(f"{key[0]:<8} {key[1]:>8} {fmt(raw):>14} {fmt(lci):>14} {rt:>10}  {units[key]}")
        if key == ("medium", 8):
            lat8 = rt
        if key[0] == "msgrate":
            rate = rt
    print(f"\ntargets (reported, not asserted): 8-byte latency LCI/raw {lat8} (target <= 1.20); "
          f"message rate LCI/raw {rate} (target >= 0.80)")


def run(argv):
    a = build_parser().parse_args(argv)
    if a.warmup < 0:
        die("--warmup must be a non-negative integer")

    progs = programs(a.build_dir)
    env = provider_env()
    runs = kept_runs("latency")
    plan = pingpong_runs(a, progs, env, runs)
    start = time.time()
    print(f"{common.PROG} latency: provider {env['FI_PROVIDER']} (LCI_SHM={env['LCI_SHM']}), {a.reps} reps, "
          f"LCI completion {a.comp}, build {progs.build_dir}", file=sys.stderr)
    try:
        plan.run_all()
        if a.keep:
            runs.keep(a.keep)
        texts = {(impl, rep): runs.read(impl, rep) for impl in ("ofi", "lci")
                 for rep in range(1, a.reps + 1)}
    finally:
        runs.remove()

    print_header(a, texts, start)
    rows = collect_rows(texts, a.reps)
    print_table(*rows)
    if a.out or a.json:
        write_outputs(a, plot_document(env, *rows), "latency.json")


def plot_document(env, order, units, values):
    """The medium latencies as the JSON document plot.draw reads
    (latency_vs_size): medians and [smallest, largest] of the runs."""
    sizes = [size for test, size in order if test == "medium"]
    names = (("ofi", "raw libfabric"), ("lci", "LCI"))
    return {"kind": "latency",
            "context": {"date": utc_now(), "cores": os.cpu_count(),
                        "machine": f"{platform.node()}, nproc {os.cpu_count()}",
                        "provider": f"FI_PROVIDER={env['FI_PROVIDER']} LCI_SHM={env['LCI_SHM']}"},
            "latency": {"sizes": sizes, "ratios": [["LCI", "raw libfabric"]],
                        "series": {n: [median_or_none(values.get((i, ("medium", s)), []))
                                       for s in sizes] for i, n in names},
                        "spread": {n: [value_range(values.get((i, ("medium", s)), []))
                                       for s in sizes] for i, n in names}}}
