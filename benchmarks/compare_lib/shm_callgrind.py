"""Instructions per 8-byte round trip of every column of `compare
shm-table`: callgrind, (Ir(N2) - Ir(N1)) / (N2 - N1), each Ir the least of
--ir-reps runs (the measuring process polls while its peer is late: a busy
machine only adds instructions to a run)."""
import os
import sys

from .runner import run_program, write_rank0_valgrind

COMMON = ["--only-medium", "--min-size", "8", "--max-size", "8", "--warmup", "0",
          "--max-time", "80000", "--timeout", "600", "--csv", "--pin"]


def plans(s, wrap):
    """column -> (command for N round trips, toggle pattern) of the columns
    run through the rank-0 wrapper (UCX is run as a pair instead)."""
    def lcrun_plan(prog):
        return lambda n: [s.lcrun, "-n", "2", "--prefix", wrap, s.bins[prog], "--iters",
                          str(n)] + COMMON
    p = {"ofi": (lcrun_plan("ofi_pingpong"), "*::pingpong*"),
         "lci_ofi": (lcrun_plan("lci_pingpong"), "*medium_pingpong*")}
    p["lci_native"] = p["lci_ofi"]
    # The LCI 2 interface's ping-pong names its function alike.
    p["lci2_native"] = (lcrun_plan("lci2_pingpong"), "*medium_pingpong*")
    if "mpi" not in s.missing:
        # hydra sets PMI_RANK, which the wrapper reads.
        p["mpi"] = (lambda n: s.mpiexec + ["-n", "2", wrap, s.mpi_bin, "--iters", str(n),
                                           "--thread-windows", "1"] +
                    [x for x in COMMON if x != "--only-medium"], "*::pingpong(*")
    return p


def read_ir(cg):
    """The Ir total of a callgrind file, or raises RuntimeError."""
    try:
        with open(cg) as f:
            for line in f:
                if line.startswith(("summary:", "totals:")) and int(line.split()[1]) > 0:
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    raise RuntimeError("callgrind collected nothing (function not found)")


class counter:
    """One callgrind run per call, its output and log kept in runs_dir."""

    def __init__(self, s, runs_dir):
        self.s, self.runs_dir = s, runs_dir
        self.plans = plans(s, write_rank0_valgrind(runs_dir))
        self.limit = 5 * s.a.timeout

    def run_ucx(self, n, cg):
        out, err = self.s.ucx.run(["-t", "tag_lat", "-s", "8", "-n", str(n), "-w", "100"],
                                  client_prefix=["valgrind", "--tool=callgrind",
                                                 f"--callgrind-out-file={cg}"])
        return (out or "") + (err or ""), err

    def run_wrapped(self, col, n, cg):
        make, toggle = self.plans[col]
        run_env = dict(self.s.env_of[col], CALLGRIND_TOGGLE=toggle, CALLGRIND_OUT=cg)
        code, o, e = run_program(make(n), run_env, self.limit)
        err = None
        if code is None:
            err = f"timed out after {self.limit} s"
        elif code != 0:
            err = f"exit {code}"
        return o + e, err

    def count(self, col, n, tag):
        """Ir of one callgrind run of n round trips, or raises RuntimeError."""
        cg = os.path.join(self.runs_dir, f"callgrind.{col}.{n}.{tag}")
        if col == "ucx":
            log, err = self.run_ucx(n, cg)
        else:
            log, err = self.run_wrapped(col, n, cg)
        with open(cg + ".log", "w") as f:
            f.write(log)
        if err:
            raise RuntimeError(f"callgrind run {err}")
        return read_ir(cg)


def column_ir(a, count, col):
    """(Ir per round trip or None, why not) of one column, and the counts."""
    runs = {a.n1: [], a.n2: []}
    why = None
    try:
        for rep in range(1, a.ir_reps + 1):
            for n in (a.n2, a.n1):
                runs[n].append(count.count(col, n, rep))
    except RuntimeError as e:
        why = str(e)
    per = None
    if runs[a.n1] and runs[a.n2]:
        # Each run's least count: waiting for a late peer only adds polling.
        per = (min(runs[a.n2]) - min(runs[a.n1])) / (a.n2 - a.n1)
        if per > 0:
            why = None
        else:
            per = None
            why = (f"Ir(N2) < Ir(N1): waits for a descheduled peer outweigh "
                   f"{a.n2 - a.n1} round trips; busy machine, raise --n2")
    return per, why, runs


def shm_instructions(s, runs_dir, columns):
    """Returns ({column: Ir per round trip}, {column: why not}) for the
    columns in order; those in s.missing are not run."""
    a = s.a
    count = counter(s, runs_dir)
    ir, why = {}, dict(s.missing)
    for col in columns:
        if col in why:
            continue
        per, reason, runs = column_ir(a, count, col)
        if per is not None:
            ir[col] = per
        elif reason is not None:
            why[col] = reason
        print(f"  callgrind {col}: Ir({a.n1}) {runs[a.n1]}, Ir({a.n2}) {runs[a.n2]} -> "
              f"{ir.get(col, why.get(col))}", file=sys.stderr)
    return ir, why
