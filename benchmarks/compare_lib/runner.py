"""Finding and launching the benchmark programs: every run is bounded, in
its own process group, and its output can be kept."""
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile

from . import common
from .common import die


class programs:
    """Finds the benchmark programs and lcrun under a build tree."""

    def __init__(self, build_dir):
        if not os.path.isdir(build_dir):
            die(f"build directory '{build_dir}' does not exist")
        self.build_dir = os.path.abspath(build_dir)

    def _find(self, name, dirs):
        for d in dirs:
            p = os.path.join(d, name)
            if os.path.isfile(p) and os.access(p, os.X_OK):
                return p
        p = shutil.which(name)
        if p:
            return p
        die(f"cannot find {name} under {self.build_dir} "
            f"(build it: cmake --build {self.build_dir} --target {name})")

    def bench(self, name):
        return self._find(name, [os.path.join(self.build_dir, "benchmarks"), common.HERE])

    def lcrun(self):
        b = self.build_dir
        return self._find("lcrun", [os.path.join(b, "tools"), os.path.join(b, "bin"), b])


def run_program(cmd, env, timeout, **kw):
    """Runs cmd in its own process group; on timeout the group gets SIGTERM,
    then SIGKILL 5 s later. Returns (returncode or None on timeout, stdout,
    stderr)."""
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True, **kw)
    try:
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out, err
    except subprocess.TimeoutExpired:
        for sig, grace in ((signal.SIGTERM, 5), (signal.SIGKILL, None)):
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                break
            try:
                out, err = p.communicate(timeout=grace)
                return None, out, err
            except subprocess.TimeoutExpired:
                continue
        out, err = p.communicate()
        return None, out, err


def failure_reason(code, err, timeout, width):
    """Why a run did not succeed: its time limit, or its exit status and the
    end of the last line of its stderr (at most `width` characters)."""
    if code is None:
        return f"timed out after {timeout} s"
    last = (err.strip().splitlines() or ["no message"])[-1]
    return f"exit {code}: {last[-width:]}"


class kept_runs:
    """The output of every program run of one invocation: <name>.<rep>.csv
    (stdout) and .err (stderr) in a temporary directory, copied to --keep."""

    def __init__(self, tag):
        self.dir = tempfile.mkdtemp(prefix=f"{tag}.")

    def path(self, name, rep, ext="csv"):
        return os.path.join(self.dir, f"{name}.{rep}.{ext}")

    def read(self, name, rep):
        with open(self.path(name, rep)) as f:
            return f.read()

    def keep(self, dest):
        os.makedirs(dest, exist_ok=True)
        for p in sorted(glob.glob(os.path.join(self.dir, "*.csv")) +
                        glob.glob(os.path.join(self.dir, "*.err"))):
            shutil.copy(p, dest)

    def remove(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def run_or_fail(runs, name, rep, cmd, env, timeout):
    """One run whose failure ends the whole comparison (exit 1) with the tail
    of its output."""
    code, out, err = run_program(cmd, env, timeout)
    with open(runs.path(name, rep), "w") as f:
        f.write(out)
    with open(runs.path(name, rep, "err"), "w") as f:
        f.write(err)
    if code != 0:
        print(f"{common.PROG}: run {rep} of {name} failed or exceeded {timeout}s:",
              file=sys.stderr)
        print("\n".join((err.splitlines() + out.splitlines())[-40:]), file=sys.stderr)
        sys.exit(1)
    print(f"  {name} run {rep}: done", file=sys.stderr)
    return out


def pair_command(lcrun, program, args):
    """A run of program on two ranks under lcrun."""
    return [lcrun, "-n", "2", program] + list(args)


def timing_args(a, options):
    """The options a timing program (ofi_pingpong, lci_pingpong, ofi_rma_bw,
    lci_bw) takes from the subcommand's own: --csv, each of `options` (names
    of attributes of a, as --name value, in that order), --stat, and --pin
    unless --no-pin."""
    args = ["--csv"]
    for name in options:
        args += ["--" + name.replace("_", "-"), str(getattr(a, name))]
    return args + ["--stat", a.stat] + ([] if a.no_pin else ["--pin"])


def alternating(reps, impls):
    """(rep, impl) of `reps` repetitions of impls, every other repetition in
    reverse order so that drift over the run favours none of them."""
    for rep in range(1, reps + 1):
        for impl in (impls if rep % 2 == 1 else impls[::-1]):
            yield rep, impl


def tool_lines(cmd):
    """The non-empty output lines of a version command (none if it fails)."""
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [l.strip() for l in (r.stdout + r.stderr).splitlines() if l.strip()]


def tool_version(cmd):
    lines = tool_lines(cmd)
    return lines[0] if lines else None


# ---- callgrind ------------------------------------------------------------------------

# The wrapper lcrun starts each rank through: valgrind on rank 0 only. It
# execs, so lcrun's pid stays the rank's.
RANK0_VALGRIND = """#!/bin/sh
if [ "${PMI_RANK:-0}" = 0 ]; then
  exec valgrind --tool=callgrind --collect-atstart=no --toggle-collect="$CALLGRIND_TOGGLE" \\
    --toggle-collect='*uncounted_settle*' --callgrind-out-file="$CALLGRIND_OUT" "$@"
fi
exec "$@"
"""


def write_rank0_valgrind(directory):
    """Writes RANK0_VALGRIND as an executable rank0_valgrind.sh in directory;
    returns its path."""
    wrap = os.path.join(directory, "rank0_valgrind.sh")
    with open(wrap, "w") as f:
        f.write(RANK0_VALGRIND)
    os.chmod(wrap, 0o755)
    return wrap


def callgrind_total(path):
    """Total Ir of a callgrind output file (its summary line, else totals)."""
    total = None
    with open(path) as f:
        for line in f:
            if line.startswith("summary:"):
                return int(line.split()[1])
            if line.startswith("totals:"):
                total = int(line.split()[1])
    if total is None:
        die(f"{path} holds no instruction total")
    return total
