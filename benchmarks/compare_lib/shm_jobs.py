"""The timing runs of `compare shm-table`: per column and group of
figures, the command and how its output gives the figures."""
import collections

from .stats import parse_csv
from .ucx import ucx_final

# name: of the run (its kept output is <name>.<rep>.txt); column: of the
# table; figures: the keys it measures; command: the program's command line,
# or for UCX a list of ucx_perftest argument lists; extract: output (for UCX
# the outputs in order) -> {figure: value}.
Job = collections.namedtuple("Job", "name column figures command extract")

WINDOW = "64"

# figure -> (test, size, mode, threads) of the ping-pong programs' CSV.
PINGPONG = {"lat8": ("medium", 8, "", 1), "rate8": ("msgrate", 8, "", 1)}
LONG_SIZES = {"lat64k": 65536, "lat1m": 1048576}


def pick_rows(text, picks):
    """figure -> value from benchmark CSV: picks maps figure to
    (test, size, mode or None, threads)."""
    got = {}
    for r in parse_csv(text):
        for fig, (test, size, mode, threads) in picks.items():
            if r["test"] == test and r["size"] == size and r["threads"] == threads and \
                    (mode is None or r["mode"] == mode):
                got[fig] = r["value"]
    return got


def scaled(got):
    """rate16 / rate1 as scale16 (rate1 itself is no figure of the table)."""
    if got.get("rate1") and got.get("rate16") is not None:
        got["scale16"] = got["rate16"] / got["rate1"]
    got.pop("rate1", None)
    return got


def long_picks(test):
    return {k: (test, s, "", 1) for k, s in LONG_SIZES.items()}


def threads_picks(mode, threads):
    return {"rate1": ("msgrate", 8, mode, 1), "rate16": ("msgrate", 8, mode, threads)}


def pingpong_jobs(s):
    """8-byte latency and 1-thread message rate."""
    a = s.a
    args = ["--csv", "--pin", "--min-size", "8", "--max-size", "8", "--window", WINDOW,
            "--iters", str(a.iters), "--warmup", str(max(1, a.iters // 10)), "--max-time",
            str(a.max_time)]
    figs = ("lat8", "rate8")
    jobs = [Job("ofi_pp", "ofi", figs, s.lcrun2 + [s.bins["ofi_pingpong"]] + args,
                lambda t: pick_rows(t, PINGPONG))]
    for col in ("lci_ofi", "lci_native"):
        jobs.append(Job(f"{col}_pp", col, figs,
                        s.lcrun2 + [s.bins["lci_pingpong"], "--proto", "medium,msgrate"] + args,
                        lambda t: pick_rows(t, PINGPONG)))
    jobs.append(Job("lci2_native_pp", "lci2_native", figs,
                    s.lcrun2 + [s.bins["lci2_pingpong"], "--proto", "medium,msgrate"] + args,
                    lambda t: pick_rows(t, PINGPONG)))
    if "mpi" not in s.missing:
        mpi_picks = dict(PINGPONG, rate8=("msgrate", 8, "comm-per-thread", 1))
        jobs.append(Job("mpi_pp", "mpi", figs, s.mpiexec + ["-n", "2", s.mpi_bin] + args,
                        lambda t: pick_rows(t, mpi_picks)))
    if s.ucx:
        jobs.append(Job("ucx_pp", "ucx", figs,
                        [["-t", "tag_lat", "-s", "8", "-n", str(10 * a.iters), "-w", "10000"],
                         ["-t", "tag_bw", "-s", "8", "-n", str(100 * a.iters), "-w", "10000",
                          "-O", WINDOW]],
                        lambda ts: {"lat8": ucx_final(ts[0])[0],
                                    "rate8": ucx_final(ts[1])[1] / 1e6}))
    return jobs


def long_jobs(s):
    """64 KiB and 1 MiB one-way latency."""
    args = ["--csv", "--pin", "--min-size", "65536", "--max-size", "1048576", "--iters", "1000",
            "--warmup", "50", "--max-time", str(s.a.max_time)]
    figs = ("lat64k", "lat1m")
    jobs = [Job("ofi_long", "ofi", figs,
                s.lcrun2 + [s.bins["ofi_rma_bw"], "--windows", "10"] + args,
                lambda t: pick_rows(t, long_picks("writedata_lat")))]
    for col in ("lci_ofi", "lci_native"):
        jobs.append(Job(f"{col}_long", col, figs,
                        s.lcrun2 + [s.bins["lci_bw"], "--tests", "sendl", "--windows", "10"] +
                        args,
                        lambda t: pick_rows(t, long_picks("sendl_lat"))))
    if "mpi" not in s.missing:
        jobs.append(Job("mpi_long", "mpi", figs,
                        s.mpiexec + ["-n", "2", s.mpi_bin, "--thread-windows", "1"] + args,
                        lambda t: pick_rows(t, long_picks("medium"))))
    if s.ucx:
        jobs.append(Job("ucx_long", "ucx", figs,
                        [["-t", "tag_lat", "-s", "65536", "-n", "5000", "-w", "500"],
                         ["-t", "tag_lat", "-s", "1048576", "-n", "1000", "-w", "100"]],
                        lambda ts: {"lat64k": ucx_final(ts[0])[0],
                                    "lat1m": ucx_final(ts[1])[0]}))
    return jobs


def thread_jobs(s):
    """8-byte message rate on 1 and --threads threads, and their ratio."""
    a, T = s.a, s.a.threads
    args = ["--csv", "--min-size", "8", "--max-size", "8", "--window", WINDOW, "--max-time",
            str(a.max_time)]
    tl = f"1,{T}"
    figs = ("rate16", "scale16")
    jobs = [Job("ofi_threads", "ofi", figs,
                s.lcrun2 + [s.bins["ofi_pingpong"], "--rate-threads", tl] + args,
                lambda t: scaled(pick_rows(t, threads_picks(None, T))))]
    for col in ("lci_ofi", "lci_native"):
        jobs.append(Job(f"{col}_threads", col, figs,
                        s.lcrun2 + [s.bins["lci_msgrate"], "--threads", tl] + args,
                        lambda t: scaled(pick_rows(t, threads_picks("shared+senders", T)))))
    if "mpi" not in s.missing:
        jobs.append(Job("mpi_threads", "mpi", figs,
                        s.mpiexec + ["-n", "2", s.mpi_bin, "--rate-threads", tl] + args,
                        lambda t: scaled(pick_rows(t, threads_picks(None, T)))))
    if s.ucx:
        bw = ["-t", "tag_bw", "-s", "8", "-O", WINDOW, "-M", "multi"]
        jobs.append(Job("ucx_threads", "ucx", figs,
                        [bw + ["-T", "1", "-n", str(20 * a.iters), "-w", "1000"],
                         bw + ["-T", str(T), "-n", str(max(100, a.iters // 2)), "-w", "100"]],
                        lambda ts: scaled({"rate1": ucx_final(ts[0])[1] / 1e6,
                                           "rate16": ucx_final(ts[1])[1] / 1e6})))
    return jobs


def shm_jobs(s):
    """Every timing run of one repetition, in order. s: the shm_setup."""
    return pingpong_jobs(s) + long_jobs(s) + thread_jobs(s)
