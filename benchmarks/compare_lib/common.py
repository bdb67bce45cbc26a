"""What every subcommand shares: the program name in messages, argument
types, the environment of the runs and the description of the machine."""
import argparse
import os
import platform
import shlex
import sys
import time

SUBCOMMANDS = ("all", "rate", "latency", "bandwidth", "instructions", "shm-table", "apps", "plot")

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
