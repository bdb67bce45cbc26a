"""`compare bandwidth`: long messages, ofi_rma_bw against lci_bw (with
registered buffers and with LCI_SEGMENT_ALL), then reg_cache_bench."""
import argparse
import glob
import os
import platform
import sys
import time

from . import common
from .common import (add_output_options, default_build_dir, die, load, positive_int,
                     provider_env, seconds, utc_now, write_outputs)
from .output import fmt, human_size
from .runner import (alternating, kept_runs, pair_command, programs, run_or_fail, run_program,
                     timing_args)
from .stats import config_lines, count_capped, parse_csv, pick, ratio, spread, value_range

EPILOG = """\
Runs `lcrun -n 2 ofi_rma_bw --csv`, `lcrun -n 2 lci_bw --csv` and
`lcrun -n 2 lci_bw --csv --segment-all` back to back R times over one
libfabric provider and prints, per size (64 KiB .. 64 MiB, powers of 4), the
medians of:
  bandwidth (GB/s = 1e9 B/s, windows of W messages, one ack per window):
    raw      fi_write into the peer's registered buffer
    rawntf   fi_write, and a notification message after each write's
             completion (the protocol of LCI_putl's remote completion)
    rawimm   fi_writedata: every write also notifies the peer (what LCI's
             long sends use for their last step)
    sendl    LCI_sendl/LCI_recvl, buffers registered once
    putl     LCI_putl into the peer's registered segment
    sa-*     the same with local buffers named LCI_SEGMENT_ALL
  the ratios LCI/raw, and one-way latency (us, ping-pong / 2):
    raw      fi_write, its completion, then a notification message
    rawimm   fi_writedata (the write delivers the notification)
    sendl, putl (remote completion to the target's queue)
Then it runs reg_cache_bench (registration-cache cost, no network). Options
after `--` go to ofi_rma_bw and lci_bw.

Environment: FI_PROVIDER (default shm; an existing value is honoured; for
tcp, FI_TCP_IFACE defaults to lo), LCI_BUILD_DIR. Takes about 1-2 minutes
with the defaults. Targets (reported, not asserted): bandwidth at sizes
>= 1 MiB at least 0.9x raw; registration-cache hit under 100 ns."""

# Above this largest / smallest bandwidth over the runs, a size counts as
# disturbed.
NOISE_LIMIT = 1.25


def build_parser():
    ap = argparse.ArgumentParser(
        prog="compare bandwidth", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="long-message bandwidth and latency: LCI against raw libfabric RMA",
        epilog=EPILOG)
    ap.add_argument("--build-dir", default=default_build_dir(),
                    help="build tree holding benchmarks/ and tools/lcrun "
                         "(default: $LCI_BUILD_DIR, else the tree this script is in)")
    ap.add_argument("--reps", type=positive_int, default=3, help="runs of each program (default 3)")
    ap.add_argument("--max-size", type=positive_int, default=67108864,
                    help="largest size (default 67108864)")
    ap.add_argument("--window", type=positive_int, default=16,
                    help="messages per bandwidth window (default 16)")
    ap.add_argument("--windows", type=positive_int, default=100,
                    help="timed windows per size (default 100)")
    ap.add_argument("--iters", type=positive_int, default=1000,
                    help="timed round trips per size in latency tests (default 1000)")
    ap.add_argument("--max-time", type=seconds, default=0.2,
                    help="time budget of one measurement in one run (default 0.2)")
    ap.add_argument("--stat", choices=("median", "mean"), default="median",
                    help="figure of one run: median (default: over windows / round trips, "
                         "robust to a busy machine) or mean")
    ap.add_argument("--pick", choices=("median", "best"), default="median",
                    help="figure over the R runs: median (default) or best (highest "
                         "bandwidth, lowest latency: what the machine can do when nothing else "
                         "disturbs it, for a machine shared with other work)")
    ap.add_argument("--no-segment-all", action="store_true",
                    help="skip the LCI_SEGMENT_ALL runs")
    ap.add_argument("--no-reg-cache", action="store_true", help="skip reg_cache_bench")
    ap.add_argument("--no-pin", action="store_true",
                    help="do not pin the two ranks to separate CPUs")
    ap.add_argument("--timeout", type=positive_int, default=120,
                    help="wall-clock limit of each program run (default 120)")
    ap.add_argument("--keep", metavar="DIR", help="keep the raw CSV output of every run in DIR")
    ap.add_argument("--from", dest="from_dir", metavar="DIR",
                    help="run nothing: print the table of the runs kept in DIR")
    ap.add_argument("extra", nargs="*", help=argparse.SUPPRESS)
    add_output_options(ap, json_name="bandwidth.json")
    return ap


def read_kept(from_dir, impls):
    """(texts, reps, impls) of the runs kept in from_dir (--from): texts maps
    (impl, rep) to a run's output; without lcisa.1.csv, no LCI_SEGMENT_ALL
    column."""
    if not (os.path.isfile(os.path.join(from_dir, "ofi.1.csv")) and
            os.path.isfile(os.path.join(from_dir, "lci.1.csv"))):
        die(f"{from_dir} holds no kept runs (ofi.1.csv, lci.1.csv)")
    if not os.path.isfile(os.path.join(from_dir, "lcisa.1.csv")):
        impls = ["ofi", "lci"]
    reps = len(glob.glob(os.path.join(from_dir, "ofi.*.csv")))
    texts = {}
    for impl in impls:
        for p in glob.glob(os.path.join(from_dir, f"{impl}.*.csv")):
            rep = os.path.basename(p)[len(impl) + 1:-4]
            with open(p) as f:
                texts[impl, int(rep) if rep.isdigit() else rep] = f.read()
    return texts, reps, impls


def run_programs(a, progs, impls, env):
    """Runs each of impls --reps times; returns {(impl, rep): output}."""
    ofi_bin, lci_bin, lcrun = progs.bench("ofi_rma_bw"), progs.bench("lci_bw"), progs.lcrun()
    common_args = timing_args(a, ("max_size", "window", "windows", "iters", "max_time"))
    cmds = {"ofi": pair_command(lcrun, ofi_bin, common_args),
            "lci": pair_command(lcrun, lci_bin, common_args),
            "lcisa": pair_command(lcrun, lci_bin, common_args + ["--segment-all"])}
    print(f"{common.PROG} bandwidth: provider {env['FI_PROVIDER']}, {a.reps} reps of "
          f"{' '.join(impls)}, build {progs.build_dir}", file=sys.stderr)
    texts = {}
    runs = kept_runs("bandwidth")
    try:
        for rep, impl in alternating(a.reps, impls):
            texts[impl, rep] = run_or_fail(runs, impl, rep, cmds[impl] + a.extra, env, a.timeout)
        if a.keep:
            runs.keep(a.keep)
    finally:
        runs.remove()
    return texts


def print_header(a, texts, impls, reps, runs_s):
    if a.from_dir:
        print(f"# tabulated from the runs kept in {a.from_dir}")
    else:
        print(f"# machine: {os.cpu_count()} cores, {platform.system()} {platform.release()}; "
              f"{utc_now()}; load {load()}; runs: {runs_s}s")
    firsts = [texts[impl, 1] for impl in impls if (impl, 1) in texts]
    for line in config_lines(firsts, ("# units", "# capped", "# statistic")):
        print(line)
    capped = count_capped(texts.values())
    if capped:
        print(f"# {capped} measurements reached --max-time {a.max_time:g} s first "
              "(their figure covers the iterations done)")
    what = f"medians of {reps} runs" if a.pick == "median" else f"best of {reps} runs"
    print(f"# {what}; bandwidth GB/s (1e9 B/s), window {a.window}; latency one-way us")
    print()


class figures:
    """Every figure of every run: {(impl, test, size): [value per run]}."""

    def __init__(self, texts, how):
        self.how = how
        self.values = {}
        self.sizes = set()
        for text in texts.values():
            for r in parse_csv(text):
                if r["mode"]:
                    continue
                self.sizes.add(r["size"])
                self.values.setdefault((r["impl"], r["test"], r["size"]), []).append(r["value"])

    def pick(self, impl, test, size):
        """The figure over runs: the median, or the best (bandwidth: highest,
        latency: lowest)."""
        v = self.values.get((impl, test, size))
        return pick(v, self.how, test.endswith("_bw")) if v else None

    def spread(self, impl, test, size):
        """Largest / smallest figure over the runs."""
        return spread(self.values.get((impl, test, size)))


def table_row(fig, s):
    """(bandwidths, LCI/raw ratios, latencies, noise) of one size."""
    raw = fig.pick("ofi", "write_bw", s)
    sb, pb = fig.pick("lci", "sendl_bw", s), fig.pick("lci", "putl_bw", s)
    ssb, spb = fig.pick("lcisa", "sendl_bw", s), fig.pick("lcisa", "putl_bw", s)
    bws = (raw, fig.pick("ofi", "write_ntf_bw", s), fig.pick("ofi", "writedata_bw", s), sb, pb,
           ssb, spb)
    ratios = (ratio(sb, raw), ratio(pb, raw), ratio(ssb, raw), ratio(spb, raw))
    lats = (fig.pick("ofi", "write_lat", s), fig.pick("ofi", "writedata_lat", s),
            fig.pick("lci", "sendl_lat", s), fig.pick("lci", "putl_lat", s))
    spreads = [x for x in (fig.spread("ofi", "write_bw", s), fig.spread("lci", "sendl_bw", s),
                           fig.spread("lci", "putl_bw", s)) if x is not None]
    return bws, ratios, lats, max(spreads) if spreads else None


def print_table_head():
    print(f"{'':>5} | {'bandwidth GB/s':<48} | {'LCI / raw bandwidth':<23} | "
          f"{'one-way latency us':<35} | noise")
    heads = ("raw", "rawntf", "rawimm", "sendl", "putl", "sa-snd", "sa-put")
    print(f"{'size':>5} | " + " ".join(f"{h:>6}" for h in heads) + " | " +
          " ".join(f"{h:>5}" for h in ("sendl", "putl", "sa-sn", "sa-pt")) + " | " +
          " ".join(f"{h:>8}" for h in ("raw", "rawimm", "sendl", "putl")) + f" | {'bw':>5}")


def lowest(x, y):
    """The smaller of two figures, either of which may be None."""
    return x if y is None or (x is not None and x < y) else y


def print_table(fig):
    """Prints one row per size, then the noise and targets lines."""
    print_table_head()
    worst_s = worst_p = None
    noisy, quiet = [], []
    for s in sorted(fig.sizes):
        bws, ratios, lats, noise = table_row(fig, s)
        print(f"{human_size(s):>5} | " + " ".join(f"{fmt(x, 2):>6}" for x in bws) + " | " +
              " ".join(f"{fmt(x, 2):>5}" for x in ratios) + " | " +
              " ".join(f"{fmt(x, 1):>8}" for x in lats) + f" | {fmt(noise, 2):>5}")
        if noise is not None and noise > NOISE_LIMIT:
            noisy.append(human_size(s))
        elif s >= 1048576:
            quiet.append(human_size(s))
            worst_s, worst_p = lowest(ratios[0], worst_s), lowest(ratios[1], worst_p)
    print_verdict(noisy, quiet, worst_s, worst_p)


def print_verdict(noisy, quiet, worst_s, worst_p):
    line = "\nnoise: largest max/min over the runs of the raw, sendl and putl bandwidths"
    if noisy:
        line += (f"; above 1.25 at {' '.join(noisy)}: the machine disturbed those runs, "
                 "their ratios say little")
    print(line)
    line = "targets (reported, not asserted): bandwidth at >= 1 MiB, LCI/raw >= 0.90: "
    if not quiet:
        line += "no size >= 1 MiB ran undisturbed; rerun with more --reps (or --pick best)"
    else:
        line += (f"lowest sendl {fmt(worst_s, 2)}, putl {fmt(worst_p, 2)} "
                 f"(over the undisturbed sizes {' '.join(quiet)})")
    print(line)


# The series of the JSON document: (name, impl, test); the LCI_SEGMENT_ALL
# ones only where they ran.
BANDWIDTH_SERIES = (("raw write", "ofi", "write_bw"), ("LCI sendl", "lci", "sendl_bw"),
                    ("LCI putl", "lci", "putl_bw"),
                    ("LCI sendl, LCI_SEGMENT_ALL", "lcisa", "sendl_bw"),
                    ("LCI putl, LCI_SEGMENT_ALL", "lcisa", "putl_bw"))
LATENCY_SERIES = (("raw write", "ofi", "write_lat"), ("LCI sendl", "lci", "sendl_lat"))


def plot_document(a, env, fig, reps):
    """The bandwidths as the JSON document plot.draw reads (bandwidth_vs_size):
    the figure over the runs (--pick) and [smallest, largest] of them, and
    the one-way latencies of the table."""
    sizes = sorted(fig.sizes)
    present = [x for x in BANDWIDTH_SERIES if any(fig.pick(x[1], x[2], s) for s in sizes)]
    return {"kind": "bandwidth",
            "context": {"date": utc_now(), "cores": os.cpu_count(),
                        "machine": f"{platform.node()}, nproc {os.cpu_count()}",
                        "provider": f"FI_PROVIDER={env['FI_PROVIDER']} LCI_SHM={env['LCI_SHM']}",
                        "statistic": f"{a.pick} of {reps} runs"},
            "bandwidth": {
                "sizes": sizes, "window": a.window, "digits": 2, "latency_digits": 1,
                "ratios": [[n, "raw write"] for n, _, _ in present[1:3]],
                "series": {n: [fig.pick(i, t, s) for s in sizes] for n, i, t in present},
                "spread": {n: [value_range(fig.values.get((i, t, s), [])) for s in sizes]
                           for n, i, t in present},
                "latency_us": {n: [fig.pick(i, t, s) for s in sizes]
                               for n, i, t in LATENCY_SERIES}}}


def run_reg_cache_bench(a, progs, env):
    reg_bin = progs.bench("reg_cache_bench")
    print()
    print("# reg_cache_bench (lci::reg_cache acquire+release, dummy registration, no network)")
    sys.stdout.flush()
    code, out, err = run_program([reg_bin] + (["--no-pin"] if a.no_pin else []), env, a.timeout)
    if code != 0:
        sys.stderr.write(err)
        die("reg_cache_bench failed")
    hit = "?"
    for line in out.splitlines():
        if line.startswith("# impl"):
            continue
        print(line)
        f = line.split()
        if len(f) >= 4 and f[0] == "regcache" and f[1] == "hit":
            hit = f[3]
    print()
    print(f"target (reported, not asserted): registration-cache hit {hit} ns (target < 100 ns)")


def run(argv):
    a = build_parser().parse_args(argv)
    if a.max_size < 65536:
        die("--max-size must be at least 65536")

    progs = programs(a.build_dir)
    impls = ["ofi", "lci"] + ([] if a.no_segment_all else ["lcisa"])
    env = provider_env()
    start = time.time()
    if a.from_dir:
        texts, reps, impls = read_kept(a.from_dir, impls)
    else:
        texts, reps = run_programs(a, progs, impls, env), a.reps
    runs_s = int(time.time() - start)

    print_header(a, texts, impls, reps, runs_s)
    fig = figures(texts, a.pick)
    print_table(fig)
    if a.out or a.json:
        write_outputs(a, plot_document(a, env, fig, reps), "bandwidth.json")
    if not a.no_reg_cache:
        run_reg_cache_bench(a, progs, env)
