"""`compare shm-table`: the intra-node comparison in one Markdown table:
raw libfabric shm, LCI over libfabric shm, LCI native shared memory (through
the LCI 1.7 C API and through the LCI 2 C++ API), MPICH and UCX's
ucx_perftest."""
import argparse
import glob
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

from . import common
from .common import (add_output_options, cpu_model, default_build_dir, die, load, positive_int,
                     provider_env, quoted_command, seconds, utc_now, write_outputs)
from .output import fmt, markdown_row, markdown_rule
from .runner import failure_reason, programs, run_program, tool_lines, tool_version
from .shm_callgrind import shm_instructions
from .shm_jobs import shm_jobs
from .stats import pick, ratio, value_range
from .ucx import ucx_pair

EPILOG = """\
Everything runs between two processes on this host, pinned to the first two
allowed CPUs (except the thread-scaling runs), over these columns:
  raw libfabric shm       ofi_pingpong / ofi_rma_bw, FI_PROVIDER=shm
  LCI over libfabric shm  lci_pingpong / lci_bw / lci_msgrate with LCI_SHM=0
  LCI native              the same programs with LCI_SHM=1 (the library's own
                          intra-node shared-memory transport)
  LCI 2 native            lci2_pingpong with LCI_SHM=1: the same medium
                          ping-pong and message rate through lci.hpp
                          (lci::post_send_x/post_recv_x, a sync, progress_x);
                          8 B figures only (its other cells read n/a)
  MPICH                   mpi_bench under mpiexec.hydra (MPICH's own transport)
  UCX                     ucx_perftest (UCP tag API) as a server/client pair on
                          localhost, UCX_TLS=--ucx-tls (default sm,self)
and these figures (medians over --reps repetitions; each repetition runs
every column once, in reversed order every other repetition):
  8 B one-way latency     medium ping-pong (LCI_sendm, post_send_x,
                          fi_senddata/injectdata, MPI_Send, tag_lat); median
                          over batches
  8 B message rate        1 thread, windows of 64 messages and one ack per
                          window (UCX: tag_bw with at most 64 sends
                          outstanding, no ack)
  64 KiB, 1 MiB latency   one-way: LCI_sendl (registered buffers), fi_writedata
                          (raw: the RMA write the LCI rendezvous ends with),
                          MPI_Send, tag_lat
  instructions / 8 B RTT  callgrind on the measuring process while its peer
                          runs natively, (Ir(N2) - Ir(N1)) / (N2 - N1) as in
                          `compare instructions`, each Ir the least of
                          --ir-reps runs; only the ping-pong function
                          is collected, except for UCX (ucx_perftest is
                          stripped: the whole client process is counted, its
                          start-up cancelling in the difference)
  16 / 1 thread rate      8 B rate with 16 threads per process against 1
                          thread: LCI one shared device (lci_msgrate), raw an
                          endpoint per thread, MPICH a communicator per thread,
                          UCX ucx_perftest -T 16 -M multi
then one Markdown table with the figures and, per figure, LCI native
divided by every column, a line with LCI 2 native divided by LCI native
(its instruction target: at most 1.05), followed by the machine and the
command line.

Every program run is bounded (--timeout) and has a fixed iteration count
(capped by --max-time); a run that fails or times out leaves its cells
"n/a (reason)" and the table is printed all the same. Until the library
reads LCI_SHM (lci_info lists it), both LCI columns take the same path;
the output says so. Takes about 1-2 minutes on 2 cores with the defaults."""

SHM_COLUMNS = (("ofi", "raw libfabric shm"), ("lci_ofi", "LCI over libfabric shm"),
               ("lci_native", "LCI native"), ("lci2_native", "LCI 2 native"), ("mpi", "MPICH"),
               ("ucx", "UCX"))
COLUMNS = [c for c, _ in SHM_COLUMNS]
HEADS = dict(SHM_COLUMNS)
# The figures of the LCI 2 column (lci2_pingpong: 8-byte ping-pong and rate).
LCI2_FIGURES = ("lat8", "rate8", "ir")
# LCI 2 native / LCI native instructions per round trip: the target.
LCI2_IR_TARGET = 1.05


def shm_figures(threads):
    """The rows of the shm table: (key, label, unit, digits, higher is better)."""
    return (("lat8", "8 B one-way latency", "us", 3, False),
            ("rate8", "8 B message rate, 1 thread, window 64", "Mmsg/s", 2, True),
            ("lat64k", "64 KiB one-way latency", "us", 2, False),
            ("lat1m", "1 MiB one-way latency", "us", 1, False),
            ("ir", "instructions per 8 B round trip", "Ir", 0, False),
            ("rate16", f"8 B message rate, {threads} threads", "Mmsg/s", 3, True),
            ("scale16", f"rate {threads} threads / 1 thread", "ratio", 3, True))


def build_parser():
    ap = argparse.ArgumentParser(
        prog="compare shm-table", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="intra-node comparison in one invocation: raw libfabric shm, LCI over "
                    "libfabric shm, LCI native shared memory, MPICH and UCX; prints a "
                    "Markdown table", epilog=EPILOG)
    ap.add_argument("--build-dir", default=default_build_dir(),
                    help="build tree holding benchmarks/ and tools/lcrun "
                         "(default: $LCI_BUILD_DIR, else the tree this script is in)")
    ap.add_argument("--reps", type=positive_int, default=5,
                    help="repetitions of every timing run (default 5)")
    ap.add_argument("--max-time", type=seconds, default=0.3,
                    help="time budget of one measurement in one run (default 0.3)")
    ap.add_argument("--pick", choices=("median", "best"), default="median",
                    help="figure over the repetitions: median (default) or best (lowest "
                         "latency, highest rate: what the machine does undisturbed, for a "
                         "machine shared with other work)")
    ap.add_argument("--iters", type=positive_int, default=10000,
                    help="timed 8-byte round trips (default 10000; UCX: 10x, its loop is "
                         "timed as a whole)")
    ap.add_argument("--threads", type=positive_int, default=16,
                    help="threads per process of the thread-scaling rate (default 16)")
    ap.add_argument("--ucx-tls", default="sm,self",
                    help="UCX_TLS of the UCX runs (default sm,self: UCX's own choice on one "
                         "host; posix,self leaves out the CMA single copy)")
    ap.add_argument("--n1", type=positive_int, default=2000,
                    help="round trips of the short callgrind run (default 2000)")
    ap.add_argument("--n2", type=positive_int, default=12000,
                    help="round trips of the long callgrind run (default 12000)")
    ap.add_argument("--ir-reps", type=positive_int, default=3,
                    help="callgrind runs per column and round-trip count; the least count "
                         "of each is taken (default 3)")
    ap.add_argument("--no-instructions", action="store_true",
                    help="skip the callgrind runs (their row reads n/a)")
    ap.add_argument("--no-mpi", action="store_true", help="leave MPICH out")
    ap.add_argument("--no-ucx", action="store_true", help="leave UCX out")
    ap.add_argument("--mpiexec", default="",
                    help="MPI launcher for mpi_bench (default: MPICH's mpiexec.hydra)")
    ap.add_argument("--timeout", type=positive_int, default=60,
                    help="wall-clock limit of each program run (default 60; callgrind "
                         "runs 5x that)")
    ap.add_argument("--keep", metavar="DIR",
                    help="keep every run's output (and the callgrind files) in DIR")
    ap.add_argument("--markdown", metavar="FILE",
                    help="also write the Markdown table to FILE (default with --out: "
                         "DIR/shm-table.md)")
    add_output_options(ap, json_name="shm-table.json")
    return ap


class shm_setup:
    """The programs, environments and launchers of every column; missing
    maps a column that is not run at all to the reason."""

    def __init__(self, a):
        self.a = a
        self.progs = programs(a.build_dir)
        self.lcrun = self.progs.lcrun()
        self.lcrun2 = [self.lcrun, "-n", "2"]
        self.bins = {n: self.progs.bench(n) for n in ("ofi_pingpong", "lci_pingpong",
                                                      "lci2_pingpong", "ofi_rma_bw", "lci_bw",
                                                      "lci_msgrate")}
        env = dict(provider_env(), FI_PROVIDER="shm")
        self.env_of = {"ofi": env, "lci_ofi": dict(env, LCI_SHM="0"),
                       "lci_native": dict(env, LCI_SHM="1"),
                       "lci2_native": dict(env, LCI_SHM="1"), "mpi": env,
                       "ucx": dict(env, UCX_TLS=a.ucx_tls, UCX_WARN_UNUSED_ENV_VARS="n")}
        self.missing = {}
        self.mpi_bin = os.path.join(self.progs.build_dir, "benchmarks", "mpi_bench")
        self.mpiexec = self.find_mpiexec()
        self.ucx = self.find_ucx()
        self.shm_settings = self.lci_shm_settings()

    def find_mpiexec(self):
        a = self.a
        if a.no_mpi:
            self.missing["mpi"] = "--no-mpi"
        elif not os.access(self.mpi_bin, os.X_OK):
            self.missing["mpi"] = "mpi_bench not built (no MPICH found by cmake)"
        elif a.mpiexec:
            return shlex.split(a.mpiexec)
        elif shutil.which("mpiexec.hydra"):
            return ["mpiexec.hydra"]
        else:
            self.missing["mpi"] = "mpiexec.hydra not on PATH"
        return []

    def find_ucx(self):
        ucx_bin = shutil.which("ucx_perftest")
        if self.a.no_ucx:
            self.missing["ucx"] = "--no-ucx"
        elif not ucx_bin:
            self.missing["ucx"] = "ucx_perftest not installed (Debian: ucx-utils)"
        else:
            return ucx_pair(ucx_bin, self.env_of["ucx"], self.a.timeout)
        return None

    def lci_shm_settings(self):
        """Does this library read LCI_SHM? lci_info lists every setting it
        reads: (name, value) of its LCI_SHM* settings, as the LCI native runs
        see them."""
        try:
            info = subprocess.run([os.path.join(os.path.dirname(self.lcrun), "lci_info")],
                                  env=self.env_of["lci_native"], capture_output=True, text=True,
                                  timeout=60).stdout
        except (OSError, subprocess.TimeoutExpired):
            info = ""
        return [l.split()[:2] for l in info.splitlines()
                if l.startswith("LCI_SHM") and len(l.split()) >= 2]


# ---- the runs ---------------------------------------------------------------------------


def run_job(s, job):
    """Runs one job: (output for the log, stderr, what extract takes, why it
    failed or None)."""
    if job.column == "ucx":
        # Unpinned like the other thread-scaling runs.
        texts, why = [], None
        for args in job.command:
            out, why = s.ucx.run(args, pin=job.name != "ucx_threads")
            if why:
                break
            texts.append(out)
        return "\n".join(texts), "", texts, why
    code, out, err = run_program(job.command, s.env_of[job.column], s.a.timeout)
    why = None if code == 0 else failure_reason(code, err, s.a.timeout, 100)
    return out, err, out, why


def job_figures(job, arg, why):
    """The figures of a job's output ({} after a failure)."""
    if why:
        return {}
    try:
        got = job.extract(arg)
    except (TypeError, ZeroDivisionError):
        got = {}
    return {k: v for k, v in got.items() if v is not None}


class results:
    """(column, figure) -> [value per repetition], and the reason of the
    last failure of those that have none."""

    def __init__(self):
        self.values, self.errors = {}, {}

    def record(self, job, got, why):
        for fig in job.figures:
            if fig in got:
                self.values.setdefault((job.column, fig), []).append(got[fig])
            else:
                self.errors[job.column, fig] = why or "no such figure in its output"


def timing_runs(s, jobs, runs_dir, res):
    """--reps repetitions of every job (every other one in reverse order);
    every output goes to runs_dir as <name>.<rep>.txt."""
    for rep in range(1, s.a.reps + 1):
        for job in (jobs if rep % 2 == 1 else jobs[::-1]):
            t0 = time.time()
            out, err, arg, why = run_job(s, job)
            with open(os.path.join(runs_dir, f"{job.name}.{rep}.txt"), "w") as f:
                f.write(out + err + (f"# failed: {why}\n" if why else ""))
            res.record(job, job_figures(job, arg, why), why)
            print(f"  rep {rep} {job.name}: " + (why or f"{time.time() - t0:.1f} s"),
                  file=sys.stderr)


def instruction_counts(s, runs_dir, res):
    """Instructions per round trip (once: callgrind counts vary little)."""
    ir, ir_why = {}, {}
    if s.a.no_instructions:
        ir_why = {col: "--no-instructions" for col in COLUMNS}
    elif not shutil.which("valgrind"):
        ir_why = {col: "valgrind not installed" for col in COLUMNS}
    else:
        ir, ir_why = shm_instructions(s, runs_dir, COLUMNS)
    for col, v in ir.items():
        res.values[col, "ir"] = [v]
    for col, why in ir_why.items():
        res.errors[col, "ir"] = why


def run_everything(s, jobs, res):
    """The timing runs, then the callgrind runs; copies every output to
    --keep. Returns the seconds the timing runs took."""
    runs_dir = tempfile.mkdtemp(prefix="shm-table.")
    start = time.time()
    print(f"{common.PROG}: {s.a.reps} reps of {len(jobs)} runs, build {s.progs.build_dir}",
          file=sys.stderr)
    try:
        timing_runs(s, jobs, runs_dir, res)
        runs_s = time.time() - start
        instruction_counts(s, runs_dir, res)
        if s.a.keep:
            os.makedirs(s.a.keep, exist_ok=True)
            for p in glob.glob(os.path.join(runs_dir, "*")):
                shutil.copy(p, s.a.keep)
    finally:
        shutil.rmtree(runs_dir, ignore_errors=True)
    return runs_s


# ---- the report -------------------------------------------------------------------------


class table:
    """The figure of every cell over the repetitions."""

    def __init__(self, s, res, figures):
        self.s, self.figures, self.errors = s, figures, res.errors
        higher_better = {f[0]: f[4] for f in figures}
        self.med = {k: pick(v, s.a.pick, higher_better[k[1]])
                    for k, v in res.values.items() if v}
        self.samples = res.values

    def cell(self, col, fig):
        """The figure, or 'n/a (reason)'."""
        if (col, fig) in self.med:
            digits = next(f[3] for f in self.figures if f[0] == fig)
            return f"{self.med[col, fig]:.{digits}f}"
        if col in self.s.missing:
            return f"n/a ({self.s.missing[col]})"
        return f"n/a ({self.errors.get((col, fig), 'not measured')})"

    def native_ratio(self, col, fig):
        """LCI native's figure divided by the column's, formatted."""
        return fmt(ratio(self.med.get(("lci_native", fig)), self.med.get((col, fig))), 2)

    def lci2_line(self):
        """LCI 2 native / LCI native for the figures of the LCI 2 column."""
        parts = []
        for fig, label, unit, digits, higher in self.figures:
            if fig in LCI2_FIGURES:
                r = ratio(self.med.get(("lci2_native", fig)), self.med.get(("lci_native", fig)))
                parts.append(f"{label} {fmt(r, 3)}")
        r = ratio(self.med.get(("lci2_native", "ir")), self.med.get(("lci_native", "ir")))
        verdict = "n/a" if r is None else ("met" if r <= LCI2_IR_TARGET else "missed")
        return (f"LCI 2 native / LCI native: {'; '.join(parts)} (instructions target "
                f"<= {LCI2_IR_TARGET:.2f}: {verdict})")


def versions(s):
    """libfabric's, MPICH's and UCX's versions, as far as their tools tell."""
    out = []
    lf = tool_version(["fi_info", "--version"])
    out.append("libfabric " + (lf.split()[-1] if lf else "?"))
    if "mpi" not in s.missing:
        info = tool_lines(["mpichversion"])
        v = [l.split()[-1] for l in info if l.startswith(("MPICH Version", "MPICH Device"))]
        out.append("MPICH " + " ".join(v[:1] + [f"({x})" for x in v[1:2]]) if v else "MPICH")
    if s.ucx:
        v = tool_version(["ucx_info", "-v"])
        out.append("UCX " + (v.split()[-1] if v else "?"))
    return out


class context:
    """What the report says about the run besides the figures."""

    def __init__(self, s, load_start, runs_s):
        a = s.a
        self.cmdline = quoted_command(sys.argv)
        self.machine = f"nproc {os.cpu_count()}, {cpu_model()}"
        self.load_start, self.load_end = load_start, load()
        self.over = f"{'medians' if a.pick == 'median' else 'best'} of {a.reps} repetitions"
        self.runs_s = runs_s
        self.date = utc_now()
        self.versions = versions(s)


def print_context(s, ctx):
    a = s.a
    print(f"# machine:  {ctx.machine}; {platform.system()} {platform.release()}; "
          f"load {ctx.load_start} at start, {ctx.load_end} at end (1/5/15 min)")
    print(f"# command:  {ctx.cmdline}")
    print(f"# date:     {ctx.date}; timing runs {ctx.runs_s:.0f} s, {ctx.over}; "
          f"instructions: least Ir of {a.ir_reps} callgrind runs per count")
    print(f"# versions: {'; '.join(ctx.versions)}")
    if s.shm_settings:
        print("# LCI:      native column with " +
              ", ".join(f"{k}={v}" for k, v in s.shm_settings) + " (lci_info); the other with "
              "LCI_SHM=0")
    else:
        print("# LCI_SHM:  this library does not read LCI_SHM (lci_info lists no such setting): "
              "the 'LCI native' column ran over libfabric shm like its neighbour")
    print(f"# UCX:      UCX_TLS={a.ucx_tls}")
    busiest = max(float(ctx.load_start.split()[0]), float(load().split()[0]))
    if busiest > 0.5 * (os.cpu_count() or 1):
        print(f"# warning:  load up to {busiest:.2f} (1 min) on {os.cpu_count()} cores: "
              "other work shared the CPUs; timings and instruction counts (polling while a "
              "descheduled peer is late) are inflated")
    print()


def print_figures(t):
    """Each figure with its same-run references and LCI native's ratio to each."""
    for fig, label, unit, digits, higher in t.figures:
        better = "higher" if higher else "lower"
        print(f"{label} ({unit}, {better} is better):")
        print("  " + "; ".join(f"{HEADS[c]} {t.cell(c, fig)}" for c in COLUMNS))
        ratios = [f"/ {HEADS[c]} {t.native_ratio(c, fig)}" for c in COLUMNS if c != "lci_native"]
        print("  LCI native " + ", ".join(ratios))
    print(t.lci2_line())
    print()


def markdown(s, t, ctx):
    """The Markdown table and the paragraph under it, as lines."""
    a, T = s.a, s.a.threads
    md = [markdown_row(["figure"] + [HEADS[c] for c in COLUMNS]), markdown_rule(len(COLUMNS))]
    for fig, label, unit, digits, higher in t.figures:
        md.append(markdown_row([f"{label} ({unit}, {'higher' if higher else 'lower'} is better)"]
                               + [t.cell(c, fig) for c in COLUMNS]))
    for fig, label, unit, digits, higher in t.figures:
        md.append(markdown_row([f"LCI native / column: {label}"] +
                               [t.native_ratio(c, fig) for c in COLUMNS]))
    md.append("")
    md.append(t.lci2_line() + ".")
    md.append("")
    md.append(f"Machine: {ctx.machine}. Command: `{ctx.cmdline}`; {ctx.over}; "
              f"{'; '.join(ctx.versions)}; UCX_TLS={a.ucx_tls}. "
              "Latency is one-way (round trip / 2). Raw libfabric at 64 KiB and 1 MiB: "
              "fi_writedata ping-pong (the RMA write LCI's rendezvous ends with); LCI: "
              "LCI_sendl from registered buffers. UCX message rate: tag_bw with at most 64 "
              "sends outstanding (no per-window ack). Thread scaling: "
              f"{T} threads per process, LCI on one shared device, raw an endpoint per thread, "
              f"MPICH a communicator per thread, UCX -T {T} -M multi; 2 processes on "
              f"{os.cpu_count()} cores oversubscribe when threads > cores / 2. Instructions: "
              f"callgrind on the measuring process, least Ir of {a.ir_reps} runs per count" +
              (", whole process for UCX (stripped binary)" if s.ucx else "") + ".")
    return md


def run(argv):
    a = build_parser().parse_args(argv)
    if a.n1 >= a.n2:
        die("need --n1 < --n2")
    s = shm_setup(a)
    jobs = shm_jobs(s)
    res = results()
    for fig, *_ in shm_figures(a.threads):
        if fig not in LCI2_FIGURES:
            res.errors["lci2_native", fig] = "LCI 2: 8 B figures only"
    load_start = load()
    runs_s = run_everything(s, jobs, res)

    t = table(s, res, shm_figures(a.threads))
    ctx = context(s, load_start, runs_s)
    print_context(s, ctx)
    print_figures(t)
    md = markdown(s, t, ctx)
    print("\n".join(md))
    md_path = a.markdown or (os.path.join(a.out, "shm-table.md") if a.out else None)
    if md_path:
        if os.path.dirname(md_path):
            os.makedirs(os.path.dirname(md_path), exist_ok=True)
        with open(md_path, "w") as f:
            f.write("\n".join(md) + "\n")
        print(f"\n# wrote {md_path}")
    if a.out or a.json or a.plot:
        write_outputs(a, plot_document(t, ctx), "shm-table.json")


def plot_document(t, ctx):
    """The figures of the table as the JSON document plot.draw reads."""
    return {"kind": "shm-table",
            "context": {"date": ctx.date, "machine": ctx.machine, "provider": "one host",
                        "command": ctx.cmdline, "cores": os.cpu_count()},
            "columns": [HEADS[c] for c in COLUMNS],
            "figures": [{"key": fig, "label": label, "unit": unit, "higher_is_better": higher,
                         "digits": digits,
                         "values": {HEADS[c]: t.med.get((c, fig)) for c in COLUMNS},
                         "spread": {HEADS[c]: value_range(t.samples.get((c, fig), []))
                                    for c in COLUMNS}}
                        for fig, label, unit, digits, higher in t.figures]}
