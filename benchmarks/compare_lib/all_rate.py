"""`compare all` and `compare rate`: latency and thread-scaling message
rate of raw libfabric, LCI and MPI back to back, medians and ratios in one
table, compare.csv, compare.json and (with gnuplot) two plots."""
import argparse
import os
import platform
import shlex
import shutil
import statistics
import sys
import time

from .common import (SUBCOMMANDS, add_output_options, cpu_model, default_build_dir, die, load,
                     provider_env, quoted_command, utc_now, write_outputs)
from .output import fmt, write_csv
from .runner import run_program
from .stats import parse_csv, ratio


def build_parser(rate_only, overview):
    sub = "rate" if rate_only else "all"
    ap = argparse.ArgumentParser(
        prog=f"compare {sub}" if rate_only else "compare [all]",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=("thread-scaling message rate of raw libfabric, LCI and MPI"
                     if rate_only else overview),
        epilog=f"Example: benchmarks/compare {sub + ' ' if rate_only else ''}"
               "--reps 3 --threads 1,2,4,8,16 --out /tmp/cmp. "
               "Other subcommands: " + ", ".join(SUBCOMMANDS) + ".")
    ap.add_argument("--build-dir", default=default_build_dir(),
                    help="build tree with benchmarks/ and tools/lcrun (default: this script's)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions (default 3)")
    ap.add_argument("--threads", default="1,2,4,8,16",
                    help="threads per rank for the message rate (default 1,2,4,8,16)")
    if not rate_only:
        ap.add_argument("--max-size", type=int, default=8192,
                        help="largest ping-pong size (default 8192)")
    ap.add_argument("--rate-size", type=int, default=8, help="message-rate size (default 8)")
    ap.add_argument("--window", type=int, default=64, help="messages per window (default 64)")
    ap.add_argument("--max-time", type=float, default=0.3,
                    help="seconds per measurement (default 0.3)")
    ap.add_argument("--timeout", type=int, default=120, help="limit of one program run (s)")
    ap.add_argument("--mpiexec", default="",
                    help="MPI launcher for mpi_bench (default: MPICH's mpiexec.hydra)")
    ap.add_argument("--no-mpi", action="store_true", help="leave MPI out")
    add_output_options(ap, out_default="compare-out")
    return ap


def check_programs(a):
    """(benchmarks directory, lcrun) of the build tree; exits if a program
    the comparison needs is not built."""
    bench = os.path.join(a.build_dir, "benchmarks")
    lcrun = os.path.join(a.build_dir, "tools", "lcrun")
    for p in (lcrun, os.path.join(bench, "lci_pingpong"), os.path.join(bench, "ofi_pingpong"),
              os.path.join(bench, "lci_msgrate")):
        if not os.access(p, os.X_OK):
            die(f"{p} is missing: build first (cmake --build {a.build_dir})")
    return bench, lcrun


def mpi_launcher(a, mpi_bench):
    """The launcher of mpi_bench with its "-n 2", or [] when MPI is not run
    (--no-mpi, mpi_bench not built, or no mpiexec.hydra)."""
    if a.no_mpi or not os.access(mpi_bench, os.X_OK):
        return []
    if a.mpiexec:
        mpiexec = shlex.split(a.mpiexec)
    elif shutil.which("mpiexec.hydra"):
        mpiexec = ["mpiexec.hydra"]   # mpi_bench is built against MPICH (LCI_WITH_MPI)
    else:
        print("# mpi_bench is built but MPICH's mpiexec.hydra is not on PATH: MPI not run")
        return []
    return mpiexec + ["-n", "2"]


def planned_runs(a, bench, lcrun, mpiexec, rate_only):
    """(name, command) of every run of one repetition, in order."""
    mpi_bench = os.path.join(bench, "mpi_bench")
    common = ["--csv", "--max-time", str(a.max_time), "--window", str(a.window)]
    rate = common + ["--max-size", str(a.rate_size), "--min-size", str(a.rate_size)]
    lcrun2 = [lcrun, "-n", "2"]
    runs = []
    if not rate_only:
        lat = common + ["--pin", "--max-size", str(a.max_size)]
        runs += [
            ("ofi_lat", lcrun2 + [os.path.join(bench, "ofi_pingpong")] + lat),
            ("lci_lat", lcrun2 + [os.path.join(bench, "lci_pingpong")] + lat),
        ]
        if mpiexec:
            runs.append(("mpi_lat", mpiexec + [mpi_bench] + lat))
    msgrate = os.path.join(bench, "lci_msgrate")
    runs += [
        ("ofi_rate", lcrun2 + [os.path.join(bench, "ofi_pingpong"),
                               "--rate-threads", a.threads] + rate),
        ("lci_rate_shared", lcrun2 + [msgrate, "--threads", a.threads] + rate),
        ("lci_rate_perthread", lcrun2 + [msgrate, "--threads", a.threads,
                                         "--device", "per-thread"] + rate),
    ]
    if mpiexec:
        runs.append(("mpi_rate", mpiexec + [mpi_bench, "--rate-threads", a.threads,
                                            "--rate-max-size", str(a.rate_size)] + rate))
    return runs


def header_lines(a, env, mpiexec):
    """The '# ' lines describing the machine and the invocation."""
    mpi = (f"; MPI via {' '.join(mpiexec[:-2])} (its own transport)" if mpiexec
           else "; MPI: not run")
    return [
        f"# machine:   {platform.node()}, nproc {os.cpu_count()}, {cpu_model()}",
        f"# kernel:    {platform.system()} {platform.release()}",
        f"# load:      {load()} (1/5/15 min) at start",
        f"# provider:  FI_PROVIDER={env['FI_PROVIDER']}, LCI_SHM={env['LCI_SHM']}" + mpi,
        f"# command:   {quoted_command(sys.argv)}",
        f"# reps:      {a.reps}, medians over repetitions",
    ]


def save_raw(a, name, rep, out, err):
    """Keeps one run's output (and its stderr as comments) under --out/raw."""
    with open(os.path.join(a.out, "raw", f"{name}.{rep}.csv"), "w") as f:
        f.write(out)
        if err:
            f.write("# stderr:\n" + "".join("# " + l + "\n" for l in err.splitlines()))


def collect_samples(a, runs, env):
    """Runs everything --reps times; returns {(impl, test, mode, size,
    threads): [value per run]}. A failed run is reported and its figures
    (if any) kept; a timed-out one contributes nothing."""
    samples = {}
    for rep in range(1, a.reps + 1):
        for name, cmd in runs:
            t0 = time.time()
            code, out, err = run_program(cmd, env, a.timeout)
            if code is None:
                print(f"# rep {rep} {name}: timed out after {a.timeout} s", file=sys.stderr)
                continue
            save_raw(a, name, rep, out, err)
            if code != 0:
                print(f"# rep {rep} {name}: exit {code}: {err.strip()[-300:]}", file=sys.stderr)
            for r in parse_csv(out):
                if name.endswith("_lat") and r["mode"]:
                    continue  # mpi_bench's 1-thread rate: taken from the rate run
                key = (r["impl"], r["test"], r["mode"], r["size"], r["threads"])
                samples.setdefault(key, []).append(r["value"])
            print(f"# rep {rep}/{a.reps} {name}: {time.time() - t0:.1f} s, load {load()}",
                  file=sys.stderr)
    return samples


class medians:
    """The median of every figure over the repetitions."""

    def __init__(self, samples):
        self.med = {k: statistics.median(v) for k, v in samples.items()}
        self.range = {k: [min(v), max(v)] for k, v in samples.items()}

    @staticmethod
    def _first(table, impl, test, size, threads, mode):
        for (i, t, m, s, th), v in table.items():
            if i == impl and t == test and s == size and th == threads and \
                    (mode is None or m == mode):
                return v
        return None

    def spread(self, impl, test, size, threads=1, mode=None):
        """[smallest, largest] of the repetitions of the figure get() gives."""
        return self._first(self.range, impl, test, size, threads, mode)

    def get(self, impl, test, size, threads=1, mode=None):
        """The first figure of impl/test/size/threads (and mode, if given)."""
        return self._first(self.med, impl, test, size, threads, mode)

    def latency_sizes(self):
        return sorted({k[3] for k in self.med if k[1] == "medium"})

    def rate_threads(self):
        return sorted({k[4] for k in self.med if k[1] == "msgrate" and k[2]})


def latency_table(med, csv_rows):
    """Prints the latency table and the ping-pong programs' 1-thread rate;
    appends their compare.csv rows; returns the plot's (size, raw, LCI, MPI)."""
    print()
    print("Latency, one-way us (medium: LCI_sendm / fi_senddata / MPI_Send ping-pong)")
    print(f"{'size':>8} {'raw':>9} {'LCI':>9} {'MPI':>9} {'LCI/raw':>8} {'LCI/MPI':>8}")
    plot_rows = []
    for s in med.latency_sizes():
        r, l, m = (med.get(impl, "medium", s) for impl in ("ofi", "lci", "mpi"))
        print(f"{s:>8} {fmt(r):>9} {fmt(l):>9} {fmt(m):>9} {fmt(ratio(l, r), 2):>8} "
              f"{fmt(ratio(l, m), 2):>8}")
        plot_rows.append((s, r, l, m) + tuple(med.spread(impl, "medium", s)
                                              for impl in ("ofi", "lci", "mpi")))
        csv_rows.append(["latency_us", s, 1, r, l, "", m, ratio(l, r), ratio(l, m)])
    r1, l1 = med.get("ofi", "msgrate", 8, 1, ""), med.get("lci", "msgrate", 8, 1, "")
    print(f"single-thread 8-byte rate (ping-pong programs), Mmsg/s: raw {fmt(r1)} LCI {fmt(l1)} "
          f"LCI/raw {fmt(ratio(l1, r1), 2)}")
    csv_rows.append(["rate1_pingpong_prog_mmsgs", 8, 1, r1, l1, "", "", ratio(l1, r1), ""])
    return plot_rows


def rate_table(a, med, csv_rows):
    """Prints the thread-scaling table; appends its compare.csv rows;
    returns the plot's (threads, raw, LCI shared, LCI per thread, MPI)."""
    rs = a.rate_size
    print()
    print(f"Message rate, {rs} B, total Mmsg/s (window {a.window}); "
          f"frac = rate(T) / rate(1 thread)")
    print(f"{'threads':>7} {'raw':>8} {'LCI-sh':>8} {'LCI-pt':>8} {'MPI':>8} "
          f"{'LCIsh/raw':>9} {'LCIpt/raw':>9} {'LCIsh/MPI':>9} "
          f"{'frac raw':>8} {'frac sh':>8} {'frac pt':>8} {'frac MPI':>8}")
    threads = med.rate_threads()
    base = None
    plot_rows = []
    for t in threads:
        figs = (med.get("ofi", "msgrate", rs, t, "per-thread+senders"),
                med.get("lci", "msgrate", rs, t, "shared+senders"),
                med.get("lci", "msgrate", rs, t, "per-thread+senders"),
                med.get("mpi", "msgrate", rs, t, "comm-per-thread"))
        if t == threads[0]:
            base = figs
        r, sh, pt, m = figs
        fr = [ratio(v, b) for v, b in zip(figs, base)]
        print(f"{t:>7} {fmt(r):>8} {fmt(sh):>8} {fmt(pt):>8} {fmt(m):>8} "
              f"{fmt(ratio(sh, r), 2):>9} {fmt(ratio(pt, r), 2):>9} {fmt(ratio(sh, m), 2):>9} "
              + " ".join(f"{fmt(x, 2):>8}" for x in fr))
        plot_rows.append((t,) + figs + (
            med.spread("ofi", "msgrate", rs, t, "per-thread+senders"),
            med.spread("lci", "msgrate", rs, t, "shared+senders"),
            med.spread("lci", "msgrate", rs, t, "per-thread+senders"),
            med.spread("mpi", "msgrate", rs, t, "comm-per-thread")))
        csv_rows.append(["msgrate_mmsgs", rs, t, r, sh, pt, m, ratio(sh, r), ratio(sh, m)])
        csv_rows.append(["msgrate_frac_of_1thread", rs, t, fr[0], fr[1], fr[2], fr[3], "", ""])
    return plot_rows


def plot_document(a, env, header, rate_rows, lat_rows):
    """The JSON document of this run (compare.json) that plot.draw reads:
    medians, and the smallest and largest repetition of each ("spread")."""
    doc = {"kind": "compare", "context": {
        "date": utc_now(), "machine": f"{platform.node()}, nproc {os.cpu_count()}, {cpu_model()}",
        "cores": os.cpu_count(),
        "provider": f"FI_PROVIDER={env['FI_PROVIDER']} LCI_SHM={env.get('LCI_SHM', '')}",
        "header": header}}
    if lat_rows:
        names = ("raw libfabric", "LCI", "MPI")
        doc["latency"] = {"sizes": [r[0] for r in lat_rows],
                          "ratios": [["LCI", "raw libfabric"], ["LCI", "MPI"]],
                          "series": {n: [r[i] for r in lat_rows] for i, n in enumerate(names, 1)},
                          "spread": {n: [r[i + len(names)] for r in lat_rows]
                                     for i, n in enumerate(names, 1)}}
    if rate_rows:
        names = ("raw libfabric", "LCI shared device", "LCI device per thread", "MPI")
        doc["rate"] = {"size": a.rate_size, "window": a.window,
                       "threads": [r[0] for r in rate_rows],
                       "series": {n: [r[i] for r in rate_rows] for i, n in enumerate(names, 1)},
                       "spread": {n: [r[i + len(names)] for r in rate_rows]
                                  for i, n in enumerate(names, 1)}}
    return doc


CSV_HEAD = ["metric", "size", "threads", "raw", "lci", "lci_per_thread_device", "mpi",
            "lci_over_raw", "lci_over_mpi"]


def run(argv, overview, rate_only=False):
    a = build_parser(rate_only, overview).parse_args(argv)
    if a.reps < 1:
        die("--reps must be at least 1")
    bench, lcrun = check_programs(a)
    env = provider_env()
    mpiexec = mpi_launcher(a, os.path.join(bench, "mpi_bench"))
    runs = planned_runs(a, bench, lcrun, mpiexec, rate_only)

    os.makedirs(os.path.join(a.out, "raw"), exist_ok=True)
    header = header_lines(a, env, mpiexec)
    print("\n".join(header))
    for name, cmd in runs:
        print(f"# run {name}: {quoted_command(cmd)}")
    sys.stdout.flush()

    med = medians(collect_samples(a, runs, env))
    print(f"# load:      {load()} (1/5/15 min) at end")
    csv_rows = []
    lat_rows = [] if rate_only else latency_table(med, csv_rows)
    rate_rows = rate_table(a, med, csv_rows)

    write_csv(os.path.join(a.out, "compare.csv"), header, CSV_HEAD, csv_rows)
    print(f"\n# wrote {os.path.join(a.out, 'compare.csv')} and raw/ (every run's output)")
    write_outputs(a, plot_document(a, env, header, rate_rows, lat_rows))
