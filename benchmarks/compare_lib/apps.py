"""`compare apps`: the application examples: bfs_lci against bfs_mpi (TEPS)
at a few graph scales, and amt_tree's task rate on 2 ranks against 1."""
import argparse
import os
import re
import shlex
import shutil
import sys
import tempfile
import time

from . import common
from .common import (add_output_options, cpu_model, default_build_dir, load, positive_int,
                     provider_env, quoted_command, utc_now, write_outputs)
from .output import fmt, markdown_row, markdown_rule
from .runner import alternating, failure_reason, programs, run_program
from .stats import median_or_none, ratio, spread

EPILOG = """\
Runs, --reps times each and alternating (every other repetition in reverse
order, so that drift over the run favours neither), on 2 ranks of this host:
  bfs_lci   examples/graph, under lcrun, LCI's default transport (LCI_SHM=1:
            native shared memory); --scale S --roots R --no-check
  bfs_mpi   the same kernel over MPI_Alltoallv, under MPICH's mpiexec.hydra
  amt_tree  examples/amt on 2 ranks and on 1 rank (--threads workers each)
and prints, per figure, the median over the repetitions, the spread of the
repetitions (largest / smallest) and the ratios LCI/MPI and 2 ranks/1 rank.
BFS: TEPS is the harmonic mean over the roots that the program prints
(traversed input edges per second, Graph500's count); AMT: tasks per second.

Launch: mpiexec.hydra starts every rank in a session of its own; on a Linux
kernel that groups the scheduling of each session (autogroup), a rank then
gets a session's share of a busy machine, where the ranks of a launcher that
keeps them in the caller's session share one. Unless --same-session, the
LCI ranks are therefore started through `setsid -w` as well, so that both
sides get the same share on a shared machine.

Every run is bounded (--timeout); a run that fails or times out leaves its
cell "n/a (reason)" and the table is printed all the same. The figures are
reported, never asserted; validation (--check) is off by default because
it runs a serial BFS per root on every rank."""


def build_parser():
    ap = argparse.ArgumentParser(
        prog="compare apps", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="the application examples: bfs_lci against bfs_mpi (TEPS) and "
                    "amt_tree on 2 ranks against 1 rank (tasks/s), in one invocation",
        epilog=EPILOG)
    ap.add_argument("--build-dir", default=default_build_dir(),
                    help="build tree holding examples/ and tools/lcrun "
                         "(default: $LCI_BUILD_DIR, else the tree this script is in)")
    ap.add_argument("--reps", type=positive_int, default=3,
                    help="repetitions of every run (default 3)")
    ap.add_argument("--scales", default="18,20",
                    help="comma-separated graph scales (2^S vertices) of the BFS runs "
                         "(default 18,20)")
    ap.add_argument("--roots", type=positive_int, default=8,
                    help="BFS roots per run (default 8)")
    ap.add_argument("--check", action="store_true",
                    help="validate every BFS tree against a serial BFS (slower)")
    ap.add_argument("--amt-depth", type=positive_int, default=16,
                    help="amt_tree --max-depth (default 16)")
    ap.add_argument("--amt-spawn-depth", type=positive_int, default=12,
                    help="amt_tree --spawn-depth (default 12)")
    ap.add_argument("--amt-threads", type=positive_int, default=2,
                    help="amt_tree --threads, TBB workers per rank (default 2)")
    ap.add_argument("--no-bfs", action="store_true", help="leave the BFS runs out")
    ap.add_argument("--no-mpi", action="store_true", help="leave bfs_mpi out")
    ap.add_argument("--no-amt", action="store_true", help="leave amt_tree out")
    ap.add_argument("--mpiexec", default="",
                    help="MPI launcher for bfs_mpi (default: MPICH's mpiexec.hydra)")
    ap.add_argument("--same-session", action="store_true",
                    help="start the LCI ranks in lcrun's session (no setsid; see below)")
    ap.add_argument("--timeout", type=positive_int, default=300,
                    help="wall-clock limit of each program run in seconds (default 300)")
    ap.add_argument("--keep", metavar="DIR", help="keep every run's output in DIR")
    ap.add_argument("--markdown", metavar="FILE",
                    help="also write the Markdown table to FILE (default with --out: "
                         "DIR/apps.md)")
    add_output_options(ap, plots=False, json_name="apps.json")
    return ap


def parse_scales(text):
    try:
        scales = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        scales = []
    if not scales or any(s < 1 or s > 30 for s in scales):
        common.die(f"--scales needs comma-separated integers 1..30, got '{text}'")
    return scales


BFS_RE = re.compile(r"harmonic mean ([0-9.eE+-]+) TEPS")
AMT_RE = re.compile(r"= ([0-9.eE+-]+) tasks/s;.*: PASS")


def first_float(regex, text):
    m = regex.search(text)
    return float(m.group(1)) if m else None


class setup:
    """The programs and launchers; missing maps a left-out implementation
    ('bfs_mpi', 'amt') to the reason."""

    def __init__(self, a):
        self.a = a
        progs = programs(a.build_dir)
        self.build_dir = progs.build_dir
        self.lcrun = progs.lcrun()
        self.missing = {}
        self.bin = {}
        for name, sub in (("bfs_lci", "graph"), ("bfs_mpi", "graph"), ("amt_tree", "amt")):
            p = os.path.join(self.build_dir, "examples", sub, name)
            if os.access(p, os.X_OK):
                self.bin[name] = p
            else:
                self.missing[name] = f"{name} not built"
        if a.no_bfs:
            self.missing["bfs_lci"] = self.missing["bfs_mpi"] = "--no-bfs"
        if a.no_mpi:
            self.missing["bfs_mpi"] = "--no-mpi"
        if a.no_amt:
            self.missing["amt_tree"] = "--no-amt"
        self.mpiexec = []
        if "bfs_mpi" not in self.missing:
            if a.mpiexec:
                self.mpiexec = shlex.split(a.mpiexec)
            elif shutil.which("mpiexec.hydra"):
                self.mpiexec = ["mpiexec.hydra"]
            else:
                self.missing["bfs_mpi"] = "mpiexec.hydra not on PATH"
        setsid = shutil.which("setsid")
        self.rank_prefix = [] if a.same_session or not setsid else [setsid, "-w"]
        # LCI's default transport on one host (its native shared memory), not
        # the libfabric provider the point-to-point subcommands pin.
        self.env = dict(provider_env(), LCI_SHM=os.environ.get("LCI_SHM", "1"))

    def lci(self, n, program, args):
        return [self.lcrun, "-n", str(n)] + self.rank_prefix + [self.bin[program]] + args

    def jobs(self, scales):
        """(key, label, command, extract) of every run of one repetition."""
        a = self.a
        out = []
        bfs_args = ["--roots", str(a.roots)] + ([] if a.check else ["--no-check"])
        for s in scales:
            args = ["--scale", str(s)] + bfs_args
            pair = []
            if "bfs_lci" not in self.missing:
                pair.append((("bfs", s, "lci"), self.lci(2, "bfs_lci", args), BFS_RE))
            if "bfs_mpi" not in self.missing:
                pair.append((("bfs", s, "mpi"),
                             self.mpiexec + ["-n", "2", self.bin["bfs_mpi"]] + args, BFS_RE))
            out.append(pair)
        if "amt_tree" not in self.missing:
            args = ["--max-depth", str(a.amt_depth), "--spawn-depth", str(a.amt_spawn_depth),
                    "--threads", str(a.amt_threads), "--timeout", str(max(a.timeout - 10, 5))]
            out.append([(("amt", n, "lci"), self.lci(n, "amt_tree", args), AMT_RE)
                        for n in (2, 1)])
        return out


def run_all(s, groups, runs_dir):
    """Every group's runs --reps times, alternating within the group.
    Returns ({key: [value per successful run]}, {key: last failure})."""
    values, errors = {}, {}
    for group in groups:
        for rep, (key, cmd, regex) in alternating(s.a.reps, group):
            t0 = time.time()
            code, out, err = run_program(cmd, s.env, s.a.timeout)
            name = "_".join(str(k) for k in key)
            with open(os.path.join(runs_dir, f"{name}.{rep}.txt"), "w") as f:
                f.write(quoted_command(cmd) + "\n" + out + err)
            v = first_float(regex, out) if code == 0 else None
            if v is None:
                why = failure_reason(code, err, s.a.timeout, 80) if code != 0 else \
                    "no figure in its output"
                errors[key] = why
                print(f"  rep {rep} {name}: {why}", file=sys.stderr)
            else:
                values.setdefault(key, []).append(v)
                print(f"  rep {rep} {name}: {v:.3g} ({time.time() - t0:.1f} s)",
                      file=sys.stderr)
    return values, errors


class report:
    def __init__(self, s, values, errors):
        self.s, self.values, self.errors = s, values, errors
        self.med = {k: median_or_none(v) for k, v in values.items()}

    def cell(self, key, digits=3):
        v = self.med.get(key)
        if v is not None:
            return f"{v:.{digits}g}"
        program = "amt_tree" if key[0] == "amt" else f"bfs_{key[2]}"
        why = self.s.missing.get(program) or self.errors.get(key, "not run")
        return f"n/a ({why})"

    def noise(self, *keys):
        """The spread of each key's repetitions, e.g. '1.12 / 1.30'."""
        cells = []
        for k in keys:
            sp = spread(self.values.get(k, []))
            cells.append(f"{sp:.2f}" if sp is not None else "-")
        return " / ".join(cells)

    def lines(self, scales):
        a = self.s.a
        md = [markdown_row(["figure", "LCI", "MPI", "LCI/MPI", "runs", "spread (max/min)"]),
              markdown_rule(5)]
        for sc in scales:
            lk, mk = ("bfs", sc, "lci"), ("bfs", sc, "mpi")
            runs = f"{len(self.values.get(lk, []))} / {len(self.values.get(mk, []))}"
            md.append(markdown_row([f"BFS scale {sc}, 2 ranks (TEPS, higher is better)",
                                    self.cell(lk), self.cell(mk),
                                    fmt(ratio(self.med.get(lk), self.med.get(mk)), 2),
                                    runs, self.noise(lk, mk)]))
        md.append("")
        md.append(markdown_row(["figure", "2 ranks", "1 rank", "2 ranks / 1 rank", "runs",
                                "spread (max/min)"]))
        md.append(markdown_rule(5))
        k2, k1 = ("amt", 2, "lci"), ("amt", 1, "lci")
        md.append(markdown_row([
            f"amt_tree depth {a.amt_depth}, spawn depth {a.amt_spawn_depth}, "
            f"{a.amt_threads} threads per rank (tasks/s, higher is better)",
            self.cell(k2), self.cell(k1), fmt(ratio(self.med.get(k2), self.med.get(k1)), 2),
            f"{len(self.values.get(k2, []))} / {len(self.values.get(k1, []))}",
            self.noise(k2, k1)]))
        return md


def run(argv):
    a = build_parser().parse_args(argv)
    scales = parse_scales(a.scales)
    s = setup(a)
    load_start = load()
    runs_dir = tempfile.mkdtemp(prefix="apps.")
    start = time.time()
    print(f"{common.PROG}: {a.reps} reps, scales {a.scales}, build {s.build_dir}",
          file=sys.stderr)
    try:
        values, errors = run_all(s, s.jobs(scales), runs_dir)
        if a.keep:
            os.makedirs(a.keep, exist_ok=True)
            for p in os.listdir(runs_dir):
                shutil.copy(os.path.join(runs_dir, p), a.keep)
    finally:
        shutil.rmtree(runs_dir, ignore_errors=True)
    r = report(s, values, errors)
    busiest = max(float(load_start.split()[0]), float(load().split()[0]))
    print(f"# machine:  nproc {os.cpu_count()}, {cpu_model()}; load {load_start} at start, "
          f"{load()} at end (1/5/15 min)")
    print(f"# command:  {quoted_command(sys.argv)}")
    print(f"# date:     {utc_now()}; runs {time.time() - start:.0f} s; medians of {a.reps} "
          f"alternating repetitions; LCI_SHM={s.env['LCI_SHM']}; LCI ranks "
          + ("in lcrun's session" if not s.rank_prefix else "each in a session of its own "
             "(setsid), as mpiexec.hydra starts them"))
    if busiest > 0.5 * (os.cpu_count() or 1):
        print(f"# warning:  load up to {busiest:.2f} (1 min) on {os.cpu_count()} cores: "
              "other work shared the CPUs; the figures are noisy")
    print()
    md = r.lines(scales)
    print("\n".join(md))
    md_path = a.markdown or (os.path.join(a.out, "apps.md") if a.out else None)
    if md_path:
        if os.path.dirname(md_path):
            os.makedirs(os.path.dirname(md_path), exist_ok=True)
        with open(md_path, "w") as f:
            f.write("\n".join(md) + "\n")
        print(f"\n# wrote {md_path}")
    if a.out or a.json:
        write_outputs(a, {"kind": "apps",
                          "context": {"date": utc_now(), "cores": os.cpu_count(),
                                      "machine": f"nproc {os.cpu_count()}, {cpu_model()}"},
                          "runs": {" ".join(map(str, k)) if isinstance(k, tuple) else str(k): v
                                   for k, v in values.items()}}, "apps.json")
