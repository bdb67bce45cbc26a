"""`compare instructions`: instructions per 8-byte medium round trip of
lci_pingpong and ofi_pingpong under callgrind."""
import argparse
import os
import shutil
import statistics
import subprocess
import sys

from .common import (add_output_options, cpu_model, default_build_dir, die, load, positive_int,
                     provider_env, utc_now, write_outputs)
from .output import fmt
from .instructions_fit import parse_iters, run_fit
from .runner import alternating, callgrind_total, programs, run_program, write_rank0_valgrind
from .stats import ratio

EPILOG = """\
Counts instructions per 8-byte medium round trip, LCI through the LCI 1.7
C API (lci_pingpong: LCI_sendm/LCI_recvm), LCI through the LCI 2 C++ API
(lci2_pingpong: lci::post_send_x/post_recv_x) and raw libfabric
(ofi_pingpong), with valgrind --tool=callgrind on rank 0
while rank 1 runs natively. Each program runs twice, with N1 and N2
ping-pong iterations (--only-medium --min-size 8 --max-size 8 --warmup 0),
and
  Ir per round trip = (Ir(N2) - Ir(N1)) / (N2 - N1)
so start-up and tear-down cancel; with --reps R every program is measured
R times (every other repetition in reverse order) and the median of its R
figures is reported. Rank 0's count includes its polling
while it waits for rank 1 (rank 1, native, answers quickly, but on a busy
machine rank 0 may poll tens of times per round trip); only the
ping-pong function is collected (--toggle-collect). With --settle rank 0
waits after each send, in a function callgrind leaves out
(bench::uncounted_settle), until rank 1 has sent its reply (rank 1 bumps a
counter in shared memory after each send), so that its first poll finds
the reply: the count is then the library's work per round trip without the
idle polls, whose number depends on how the two ranks were scheduled; the
LCI 2 target is judged on this figure. Also writes
`callgrind_annotate` of the N2 runs (the top functions by Ir) to --out.

With --fit the programs run without --settle at each of --fit-iters
round-trip counts (--reps times each); callgrind's call counts give each
run's polls (the waits' calls of LCI_progress, lci::progress,
rdm_endpoint::poll) and its send retries (the polls a refused send makes
before it tries again), and
  Ir = a * round_trips + b * empty_polls + d * send_retries + c,
  empty_polls = polls - round_trips
is fitted by least squares over the runs: a, the round trip with the one
poll that finds the reply, does not move with the idle polling of a busy
machine; b is an empty poll, d a refused send (a column that is all zero,
or follows the round trips, is left out and its coefficient shows as -).
a is also split, each part fitted alike so the parts add up to it, by
phase (inclusive Ir of the program's calls: send = LCI_sendm / post_send /
fi_injectdata; receive post = LCI_recvm / post_recv / fi_recv; arrival =
LCI_progress / progress / fi_cq_read; test = LCI_sync_test / sync_test, none
for raw libfabric; benchmark = the program's own code) and by layer
(exclusive Ir by source directory: lci/api, lci/core, lci/match, ...,
libfabric, libc, benchmark). Printed per program, and under "fit" in the
JSON document (per_round_trip holds a). The residual (rms, max) and the
standard errors of a, b and d tell how well the runs fit.

Environment: FI_PROVIDER (default shm); LCI_SHM (default 0: LCI over the
same libfabric provider; LCI_SHM=1 measures LCI's native shared memory).
Targets (reported, not asserted): at most 2000 instructions per round trip
for LCI; LCI 2 at most 1.05x LCI 1.7's."""

# Only the ping-pong function is counted (start-up, barriers and tear-down
# poll for a time that varies from run to run).
TOGGLE = {"lci": "*medium_pingpong*", "lci2": "*medium_pingpong*", "ofi": "*::pingpong*"}
IMPLS = ("lci", "lci2", "ofi")

LCI_TARGET = 2000
# lci2 / lci: the LCI 2 interface costs at most 5% more than the C API.
LCI2_TARGET = 1.05


def build_parser():
    ap = argparse.ArgumentParser(
        prog="compare instructions", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="instructions per 8-byte medium round trip under callgrind, LCI (LCI 1.7 "
                    "and LCI 2 interfaces) and raw libfabric", epilog=EPILOG)
    ap.add_argument("--build-dir", default=default_build_dir(),
                    help="build tree with benchmarks/ and tools/lcrun (default: this script's)")
    ap.add_argument("--n1", type=int, default=2000, help="iterations of the short run (default 2000)")
    ap.add_argument("--n2", type=int, default=12000, help="iterations of the long run (default 12000)")
    ap.add_argument("--reps", type=positive_int, default=1,
                    help="measurements per program; the median is reported (default 1)")
    ap.add_argument("--top", type=int, default=15, help="functions shown per annotation (default 15)")
    ap.add_argument("--settle", action="store_true",
                    help="rank 0 polls for each reply only once rank 1 has sent it (it waits "
                         "for that outside the count): the count leaves out idle polling")
    ap.add_argument("--fit", action="store_true",
                    help="fit Ir = a*round_trips + b*empty_polls + d*send_retries + c over runs at "
                         "--fit-iters (without --settle); report a by phase and by layer")
    ap.add_argument("--fit-iters", type=parse_iters, default=[1000, 2000, 3000, 4000, 6000, 8000],
                    metavar="N,N,...",
                    help="round-trip counts of the --fit runs, each run --reps times "
                         "(default 1000,2000,3000,4000,6000,8000)")
    add_output_options(ap, out_default="callgrind-out", plots=False,
                       json_name="instructions.json")
    return ap


def run_name(a, impl, n, rep):
    """<impl>.<n>, with .<rep> when there are several repetitions."""
    return f"{impl}.{n}" + (f".{rep}" if a.reps > 1 else "")


def callgrind_run(a, impl, name, n, prog, lcrun, wrap, env, out):
    """One run of n round trips with rank 0 under callgrind; returns the
    path of its callgrind file (out/callgrind.<name>; its log out/<name>.log)."""
    cg = os.path.join(out, f"callgrind.{name}")
    cmd = [lcrun, "-n", "2", "--prefix", wrap, prog, "--only-medium", "--min-size", "8",
           "--max-size", "8", "--iters", str(n), "--warmup", "0", "--max-time", "80000",
           "--timeout", "600", "--csv", "--pin"]
    if a.settle:
        cmd.append("--settle")
    print(f"# run: CALLGRIND_TOGGLE='{TOGGLE[impl]}' CALLGRIND_OUT={cg} {' '.join(cmd)}")
    sys.stdout.flush()
    run_env = dict(env, CALLGRIND_TOGGLE=TOGGLE[impl], CALLGRIND_OUT=cg)
    log = os.path.join(out, f"{name}.log")
    code, o, e = run_program(cmd, run_env, 900)
    with open(log, "w") as f:
        f.write(o + e)
    if code != 0:
        die(f"run failed, see {log}", 1)
    return cg


def count(a, impl, n, rep, prog, lcrun, wrap, env, out):
    """Ir of rank 0 in one run of n round trips."""
    return callgrind_total(callgrind_run(a, impl, run_name(a, impl, n, rep), n, prog, lcrun, wrap,
                                         env, out))


def annotate(a, impl, out):
    """The top of callgrind_annotate of the (first) N2 run into annotate.<impl>.txt."""
    ann = subprocess.run(["callgrind_annotate",
                          os.path.join(out, f"callgrind.{run_name(a, impl, a.n2, 1)}")],
                         capture_output=True, text=True)
    with open(os.path.join(out, f"annotate.{impl}.txt"), "w") as f:
        f.write("\n".join(ann.stdout.splitlines()[:a.top + 25]) + "\n")


def per_round_trip(a, ir):
    """(Ir(N2) - Ir(N1)) / (N2 - N1), rounded towards zero."""
    diff = ir[a.n2] - ir[a.n1]
    return (abs(diff) // (a.n2 - a.n1)) * (1 if diff >= 0 else -1)


def print_summary(a, per_rtt, out):
    print()
    what = "Ir/round trip" if a.reps == 1 else f"median of {a.reps}"
    print(f"{'impl':<6} {what:>14}")
    for impl in IMPLS:
        print(f"{impl:<6} {per_rtt[impl]:>14}")
    l, l2, o = per_rtt["lci"], per_rtt["lci2"], per_rtt["ofi"]
    verdict = "met" if l <= LCI_TARGET else f"missed by {l - LCI_TARGET}"
    print(f"LCI/raw {fmt(ratio(l, o), 2)}; LCI target <= {LCI_TARGET}: {verdict}")
    r2 = ratio(l2, l)
    verdict2 = "n/a" if r2 is None else ("met" if r2 <= LCI2_TARGET else "missed")
    print(f"LCI2/LCI {fmt(r2, 3)}; LCI 2 target <= {LCI2_TARGET:.2f}x LCI: {verdict2}")
    print(f"# annotations (top functions by Ir, {a.n2}-iteration runs): " +
          " ".join(f"{out}/annotate.{impl}.txt" for impl in IMPLS))


def run(argv):
    a = build_parser().parse_args(argv)
    if not 0 <= a.n1 < a.n2:
        die("need 0 <= n1 < n2")
    if a.fit and a.settle:
        die("--fit counts the polls of unsettled runs: leave out --settle")
    if not shutil.which("valgrind"):
        die("valgrind is not installed")
    progs = programs(a.build_dir)
    lcrun = progs.lcrun()
    env = provider_env()
    os.makedirs(a.out, exist_ok=True)
    out = os.path.abspath(a.out)
    wrap = write_rank0_valgrind(out)

    vg = subprocess.run(["valgrind", "--version"], capture_output=True, text=True).stdout.strip()
    print(f"# machine: nproc {os.cpu_count()}, {cpu_model()}, load {load()}")
    print(f"# provider: FI_PROVIDER={env['FI_PROVIDER']}, LCI_SHM={env['LCI_SHM']}; valgrind {vg}"
          + ("; --settle" if a.settle else ""))
    sys.stdout.flush()
    if a.fit:
        run_fit(a, progs, env, lambda impl, prog: lambda name, n: callgrind_run(
            a, impl, name, n, prog, lcrun, wrap, env, out))
        return
    figures = {impl: [] for impl in IMPLS}
    for rep, impl in alternating(a.reps, IMPLS):
        prog = progs.bench(f"{impl}_pingpong")
        ir = {n: count(a, impl, n, rep, prog, lcrun, wrap, env, out) for n in (a.n1, a.n2)}
        figures[impl].append(per_round_trip(a, ir))
        print(f"{impl}: Ir({a.n1}) = {ir[a.n1]}, Ir({a.n2}) = {ir[a.n2]} -> {figures[impl][-1]} "
              "instructions per round trip" + (f" (rep {rep})" if a.reps > 1 else ""))
        sys.stdout.flush()
    for impl in IMPLS:
        annotate(a, impl, out)
    per_rtt = {impl: int(statistics.median(v)) for impl, v in figures.items()}
    print_summary(a, per_rtt, out)
    write_outputs(a, {"kind": "instructions",
                      "context": {"date": utc_now(), "cores": os.cpu_count(),
                                  "machine": f"nproc {os.cpu_count()}, {cpu_model()}",
                                  "provider": f"FI_PROVIDER={env['FI_PROVIDER']} "
                                              f"LCI_SHM={env['LCI_SHM']}",
                                  "settle": a.settle},
                      "per_round_trip": per_rtt, "runs": figures}, "instructions.json")
