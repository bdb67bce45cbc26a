"""`compare instructions`: instructions per 8-byte medium round trip of
lci_pingpong and ofi_pingpong under callgrind."""
import argparse
import os
import shutil
import subprocess
import sys

from .common import cpu_model, default_build_dir, die, load, provider_env
from .output import fmt
from .runner import callgrind_total, programs, run_program, write_rank0_valgrind
from .stats import ratio

EPILOG = """\
Counts instructions per 8-byte medium round trip, LCI (lci_pingpong) and
raw libfabric (ofi_pingpong), with valgrind --tool=callgrind on rank 0
while rank 1 runs natively. Each program runs twice, with N1 and N2
ping-pong iterations (--only-medium --min-size 8 --max-size 8 --warmup 0),
and
  Ir per round trip = (Ir(N2) - Ir(N1)) / (N2 - N1)
so start-up and tear-down cancel. Rank 0's count includes its polling
while it waits for rank 1 (rank 1, native, answers quickly); only the
ping-pong function is collected (--toggle-collect). Also writes
`callgrind_annotate` of the N2 runs (the top functions by Ir) to --out.

Environment: FI_PROVIDER (default shm). Target (reported, not asserted):
at most 2000 instructions per round trip for LCI."""

# Only the ping-pong function is counted (start-up, barriers and tear-down
# poll for a time that varies from run to run).
TOGGLE = {"lci": "*medium_pingpong*", "ofi": "*::pingpong*"}

LCI_TARGET = 2000


def build_parser():
    ap = argparse.ArgumentParser(
        prog="compare instructions", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="instructions per 8-byte medium round trip under callgrind, LCI and raw "
                    "libfabric", epilog=EPILOG)
    ap.add_argument("--build-dir", default=default_build_dir(),
                    help="build tree with benchmarks/ and tools/lcrun (default: this script's)")
    ap.add_argument("--n1", type=int, default=2000, help="iterations of the short run (default 2000)")
    ap.add_argument("--n2", type=int, default=12000, help="iterations of the long run (default 12000)")
    ap.add_argument("--out", default="callgrind-out",
                    help="where the callgrind files and annotations go (default callgrind-out)")
    ap.add_argument("--top", type=int, default=15, help="functions shown per annotation (default 15)")
    return ap


def count(a, impl, n, prog, lcrun, wrap, env, out):
    """Ir of rank 0 in one run of n round trips."""
    cg = os.path.join(out, f"callgrind.{impl}.{n}")
    cmd = [lcrun, "-n", "2", "--prefix", wrap, prog, "--only-medium", "--min-size", "8",
           "--max-size", "8", "--iters", str(n), "--warmup", "0", "--max-time", "80000",
           "--timeout", "600", "--csv", "--pin"]
    print(f"# run: CALLGRIND_TOGGLE='{TOGGLE[impl]}' CALLGRIND_OUT={cg} {' '.join(cmd)}")
    sys.stdout.flush()
    run_env = dict(env, CALLGRIND_TOGGLE=TOGGLE[impl], CALLGRIND_OUT=cg)
    log = os.path.join(out, f"{impl}.{n}.log")
    code, o, e = run_program(cmd, run_env, 900)
    with open(log, "w") as f:
        f.write(o + e)
    if code != 0:
        die(f"run failed, see {log}", 1)
    return callgrind_total(cg)


def annotate(a, impl, out):
    """The top of callgrind_annotate of the N2 run into annotate.<impl>.txt."""
    ann = subprocess.run(["callgrind_annotate", os.path.join(out, f"callgrind.{impl}.{a.n2}")],
                         capture_output=True, text=True)
    with open(os.path.join(out, f"annotate.{impl}.txt"), "w") as f:
        f.write("\n".join(ann.stdout.splitlines()[:a.top + 25]) + "\n")


def per_round_trip(a, ir):
    """(Ir(N2) - Ir(N1)) / (N2 - N1), rounded towards zero."""
    diff = ir[a.n2] - ir[a.n1]
    return (abs(diff) // (a.n2 - a.n1)) * (1 if diff >= 0 else -1)


def print_summary(a, per_rtt, out):
    print()
    print(f"{'impl':<6} {'Ir/round trip':>14}")
    for impl in ("lci", "ofi"):
        print(f"{impl:<6} {per_rtt[impl]:>14}")
    l, o = per_rtt["lci"], per_rtt["ofi"]
    verdict = "met" if l <= LCI_TARGET else f"missed by {l - LCI_TARGET}"
    print(f"LCI/raw {fmt(ratio(l, o), 2)}; LCI target <= {LCI_TARGET}: {verdict}")
    print(f"# annotations (top functions by Ir, {a.n2}-iteration runs): "
          f"{out}/annotate.lci.txt {out}/annotate.ofi.txt")


def run(argv):
    a = build_parser().parse_args(argv)
    if not 0 <= a.n1 < a.n2:
        die("need 0 <= n1 < n2")
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
    print(f"# provider: FI_PROVIDER={env['FI_PROVIDER']}; valgrind {vg}")
    sys.stdout.flush()
    per_rtt = {}
    for impl in ("lci", "ofi"):
        prog = progs.bench(f"{impl}_pingpong")
        ir = {n: count(a, impl, n, prog, lcrun, wrap, env, out) for n in (a.n1, a.n2)}
        per_rtt[impl] = per_round_trip(a, ir)
        print(f"{impl}: Ir({a.n1}) = {ir[a.n1]}, Ir({a.n2}) = {ir[a.n2]} -> {per_rtt[impl]} "
              "instructions per round trip")
        annotate(a, impl, out)
    print_summary(a, per_rtt, out)
