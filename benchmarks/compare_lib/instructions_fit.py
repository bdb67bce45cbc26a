"""`compare instructions --fit`: instructions per round trip fitted against
the number of polls, by phase and by layer.

Every program runs at each of --fit-iters round-trip counts (--reps times)
without --settle; each run gives its Ir, its polls (the program's calls of
the poll function, callgrind's call counts) and from its call graph the Ir
of each phase and layer. Over the runs
  Ir = a * round_trips + b * empty_polls + d * send_retries + c,
  empty_polls = polls - round_trips
(one poll per round trip finds the reply; the others are empty; a send the
transport refused is retried after a poll, counted apart), so a is the
round trip with its one successful poll and no idle polling, b an empty
poll, d a refused send and its poll (a column of no retries is left out),
c what the run does once. Each phase's and layer's Ir is fitted over
the same columns; least squares being linear, their a (and b) add up to
the whole's."""
import argparse
import os
import sys

from . import callgrind_profile as cgp
from .common import cpu_model, die, utc_now, write_outputs
from .fit import fit_round_trips, fit_with, singular
from .output import fmt
from .runner import alternating
from .stats import ratio

IMPLS = ("lci", "lci2", "ofi")
PHASE_ROWS = cgp.PHASES + ("benchmark", "other")


def parse_iters(text):
    """--fit-iters: comma-separated round-trip counts, at least two distinct."""
    try:
        v = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a comma-separated list of integers")
    if any(x < 1 for x in v) or len(set(v)) < 2:
        raise argparse.ArgumentTypeError("needs at least two different counts, each at least 1")
    return v


def measure(impl, n, rep, run_one):
    """One run: its callgrind file read into Ir, polls, phases and layers."""
    name = f"fit.{impl}.{n}.{rep}"
    p = cgp.profile(run_one(name, n))
    polls, retries = cgp.poll_count(p, impl)
    return {"iters": n, "rep": rep, "ir": p.total, "polls": polls, "empty_polls": polls - n,
            "send_retries": retries, "phases": cgp.phase_costs(p, impl),
            "layers": cgp.layer_costs(p)}


def fit_program(runs):
    """The fit of one program's runs: the whole, each phase, each layer."""
    rts = [r["iters"] for r in runs]
    empty = [r["empty_polls"] for r in runs]
    retries = [r["send_retries"] for r in runs]
    try:
        f = fit_round_trips(rts, empty, [r["ir"] for r in runs], retries)
    except singular as e:
        die(f"cannot fit: {e}", 1)

    def r1(v):
        return None if v is None else round(v, 1)

    def parts(key):
        names = []
        for r in runs:
            names += [k for k in r[key] if k not in names]
        if key == "layers":
            names.sort(key=cgp.layer_order)
        out = {}
        if key == "phases":
            # Every phase, in order; one the program has not (raw
            # libfabric's test) is null.
            out = {k: {"per_round_trip": None, "per_empty_poll": None, "per_send_retry": None}
                   for k in PHASE_ROWS if k not in names}
            names = [k for k in PHASE_ROWS if k in names]
        for k in names:
            pa, pb, pd = fit_with(f["model"], rts, empty, [r[key].get(k, 0) for r in runs],
                                  retries)
            out[k] = {"per_round_trip": r1(pa), "per_empty_poll": r1(pb),
                      "per_send_retry": r1(pd)}
        if key == "phases":
            out = {k: out[k] for k in PHASE_ROWS}
        return out

    return {"model": f["model"], "a": r1(f["a"]), "b": r1(f["b"]), "d": r1(f["d"]),
            "c": round(f["c"]), "a_stderr": r1(f["a_stderr"]), "b_stderr": r1(f["b_stderr"]),
            "d_stderr": r1(f["d_stderr"]), "rms": r1(f["rms"]), "max": r1(f["max"]),
            "phases": parts("phases"), "layers": parts("layers"),
            "runs": [{k: r[k] for k in ("iters", "rep", "ir", "polls", "empty_polls",
                                        "send_retries")} for r in runs]}


def pm(value, err):
    return fmt(value, 1) + ("" if err is None else f" +- {fmt(err, 1)}")


def print_program(impl, f):
    print()
    retried = f["d"] is not None
    print(f"{impl}: Ir = a * round_trips + b * empty_polls" +
          (" + d * send_retries" if retried else "") + f" + c over {len(f['runs'])} runs")
    for r in f["runs"]:
        print(f"  {r['iters']:>7} round trips  {r['polls']:>8} polls ({r['empty_polls']} empty)  "
              f"{r['send_retries']:>6} send retries  Ir {r['ir']}")
    if f["b"] is None:
        print("  the empty polls follow the round trips (none, or the same share in every run): "
              "b is undetermined")
    print(f"  a = {pm(f['a'], f['a_stderr'])} per round trip, b = {pm(f['b'], f['b_stderr'])} per "
          "empty poll, " + (f"d = {pm(f['d'], f['d_stderr'])} per send retry, " if retried else "")
          + f"c = {f['c']}; residual rms {fmt(f['rms'], 1)}, max {fmt(f['max'], 1)}")
    cols = [("per round trip", "per_round_trip"), ("per empty poll", "per_empty_poll")]
    if retried:
        cols.append(("per send retry", "per_send_retry"))
    for title, key in (("phase", "phases"), ("layer", "layers")):
        print(f"  {title:<20}" + "".join(f" {h:>15}" for h, _ in cols))
        for k, v in f[key].items():
            if key == "layers" and not any(v[c] for _, c in cols):
                continue
            print(f"  {k:<20}" + "".join(f" {fmt(v[c], 1):>15}" for _, c in cols))


def print_phase_table(fits):
    """The phases of every program side by side."""
    print()
    print("Instructions per 8-byte round trip by phase (fitted, empty polls and send retries removed)")
    print(f"{'phase':<14}" + "".join(f"{impl:>10}" for impl in IMPLS))
    for ph in PHASE_ROWS:
        print(f"{ph:<14}" + "".join(
            f"{fmt(fits[impl]['phases'].get(ph, {}).get('per_round_trip'), 1):>10}"
            for impl in IMPLS))
    print(f"{'total (a)':<14}" + "".join(f"{fmt(fits[impl]['a'], 1):>10}" for impl in IMPLS))
    print(f"{'empty poll (b)':<14}" + "".join(f"{fmt(fits[impl]['b'], 1):>10}" for impl in IMPLS))
    print(f"{'send retry (d)':<14}" + "".join(f"{fmt(fits[impl]['d'], 1):>10}" for impl in IMPLS))
    print("(raw libfabric has no test: fi_cq_read reports the completion it progressed, "
          "its arrival; benchmark: the program's own loop and waits, other: clock reads and "
          "the closing barrier)")
    l, l2, o = (fits[i]["a"] for i in IMPLS)
    print(f"LCI/raw {fmt(ratio(l, o), 2)}; LCI2/LCI {fmt(ratio(l2, l), 3)}")


def run_fit(a, progs, env, run_one_of):
    """The --fit mode of `compare instructions`. run_one_of(impl, prog)
    returns a function (name, n) -> callgrind file of one run."""
    runs = {impl: [] for impl in IMPLS}
    for rep, impl in alternating(a.reps, IMPLS):
        run_one = run_one_of(impl, progs.bench(f"{impl}_pingpong"))
        order = a.fit_iters if rep % 2 == 1 else a.fit_iters[::-1]
        for n in order:
            r = measure(impl, n, rep, run_one)
            runs[impl].append(r)
            print(f"{impl}: {n} round trips, {r['polls']} polls, Ir {r['ir']}")
            sys.stdout.flush()
    fits = {impl: fit_program(runs[impl]) for impl in IMPLS}
    for impl in IMPLS:
        print_program(impl, fits[impl])
    print_phase_table(fits)
    write_outputs(a, {"kind": "instructions",
                      "context": {"date": utc_now(), "cores": os.cpu_count(),
                                  "machine": f"nproc {os.cpu_count()}, {cpu_model()}",
                                  "provider": f"FI_PROVIDER={env['FI_PROVIDER']} "
                                              f"LCI_SHM={env['LCI_SHM']}",
                                  "settle": False, "fit": True, "iters": a.fit_iters,
                                  "reps": a.reps},
                      "per_round_trip": {impl: round(fits[impl]["a"]) for impl in IMPLS},
                      "fit": fits}, "instructions.json")
