"""What every subcommand shares: the program name in messages, argument
types, the environment of the runs and the description of the machine."""
import argparse
import os
import platform
import shlex
import sys
import time

SUBCOMMANDS = ("all", "rate", "latency", "bandwidth", "instructions", "shm-table", "apps", "plot",
               "tables")

# The directory of the entry script (benchmarks/ in the source or build
# tree); cli.main sets it.
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# "compare", or "compare SUBCOMMAND" once the subcommand is known.
PROG = "compare"


def die(msg, status=2):
    print(f"{PROG}: {msg}", file=sys.stderr)
    sys.exit(status)


def positive_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer")
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {v}")
    return v


def seconds(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of seconds")
    if v < 0:
        raise argparse.ArgumentTypeError("must not be negative")
    return v


def default_build_dir():
    return os.environ.get("LCI_BUILD_DIR") or os.path.dirname(HERE)


def provider_env():
    """The environment of every run: FI_PROVIDER defaults to shm; tcp to lo.
    LCI_SHM defaults to 0: the LCI runs compare LCI over the same libfabric
    provider as the raw runs, and with LCI_SHM=1 (the library's default) the
    two ranks of one host would talk through LCI's native shared-memory
    transport instead, whatever FI_PROVIDER says. shm-table sets LCI_SHM
    per column itself."""
    env = dict(os.environ)
    env.setdefault("FI_PROVIDER", "shm")
    env.setdefault("LCI_SHM", "0")
    if env["FI_PROVIDER"].startswith("tcp"):
        env.setdefault("FI_TCP_IFACE", "lo")
    return env


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load():
    return "%.2f %.2f %.2f" % os.getloadavg()


def utc_now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def quoted_command(cmd):
    """A command as one shell-quoted line."""
    return " ".join(shlex.quote(x) for x in cmd)


def add_output_options(ap, out_default=None, plots=True, json_name="compare.json"):
    """The options every measuring subcommand shares, with one meaning:
    --out DIR (where the run's files go: the JSON document, the plots, and
    what the subcommand writes beside them), --json FILE (the JSON document
    `compare plot` and `compare tables` read; default DIR/json_name with
    --out), and where there is something to draw --plot DIR (default: --out)
    and --no-plot."""
    g = ap.add_argument_group("output (the same in every subcommand)")
    g.add_argument("--out", metavar="DIR", default=out_default,
                   help="directory of the run's files: the JSON document, the plots, and the "
                        "subcommand's own files" +
                        (f" (default {out_default})" if out_default else
                         " (default: none, the table is printed only)"))
    g.add_argument("--json", metavar="FILE",
                   help=f"write the figures as JSON to FILE (default with --out: DIR/{json_name}); "
                        "`compare plot` and `compare tables` read it")
    if plots:
        g.add_argument("--plot", metavar="DIR",
                       help="draw the plots (SVG and PNG, gnuplot) into DIR (default: --out)")
        g.add_argument("--no-plot", action="store_true",
                       help="draw no plot, even with --out or --plot")
    return g


def json_path(a, json_name="compare.json"):
    """Where the JSON document goes: --json, else DIR/json_name with --out,
    else None."""
    if a.json:
        return a.json
    return os.path.join(a.out, json_name) if a.out else None


def plot_dir(a):
    """Where the plots go: --plot, else --out; None with --no-plot."""
    if getattr(a, "no_plot", True):
        return None
    return a.plot or a.out


def write_outputs(a, doc, json_name="compare.json"):
    """Writes the JSON document and draws its plots where the output
    options say."""
    from . import plot  # plot imports this module
    path = json_path(a, json_name)
    if path:
        if os.path.dirname(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
        print(f"# wrote {plot.write_json(path, doc)} (compare plot and compare tables read it)")
    where = plot_dir(a)
    if where:
        plot.draw(doc, where)
