#!/usr/bin/env python3
"""benchmarks.compare.fit.unit: the least-squares fit of `compare instructions
--fit` on synthetic numbers, and the reading of a small hand-written
callgrind file into polls, phases and layers. Pure Python, nothing is run.
Prints "check_fit: N checks passed"."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from compare_lib import callgrind_profile as cgp  # noqa: E402
from compare_lib.fit import fit_round_trips, fit_with, least_squares, singular, solve  # noqa: E402

checks = 0


def expect(cond, what):
    global checks
    if not cond:
        print(f"check_fit: FAILED: {what}", file=sys.stderr)
        sys.exit(1)
    checks += 1


def close(x, y, tol):
    return x is not None and abs(x - y) <= tol


# solve(): a 3x3 system that needs a row exchange.
x = solve([[0, 2, 1], [1, 1, 1], [2, 0, 3]], [5, 6, 13])
expect(all(close(u, v, 1e-9) for u, v in zip(x, [2, 1, 3])), f"solve gave {x}")
try:
    solve([[1, 2], [2, 4]], [1, 2])
    expect(False, "solve of a singular matrix did not raise")
except singular:
    expect(True, "")

# Exact data: Ir = 950 * rt + 60 * empty + 150000 is recovered with no residual.
rts = [1000, 2000, 3000, 4000, 6000, 8000]
empty = [90, 4630, 120, 20000, 700, 13000]
ir = [950 * t + 60 * e + 150000 for t, e in zip(rts, empty)]
f = fit_round_trips(rts, empty, ir)
expect(f["model"] == "rt+polls", f"model {f['model']}")
expect(close(f["a"], 950, 1e-6) and close(f["b"], 60, 1e-6) and close(f["c"], 150000, 1e-3),
       f"exact fit gave a {f['a']} b {f['b']} c {f['c']}")
expect(f["rms"] < 1e-3 and f["max"] < 1e-3, f"exact fit residual {f['rms']}")
expect(close(f["a_stderr"], 0, 1e-6), f"exact fit stderr {f['a_stderr']}")

# Noisy data: a deterministic +-500 on each run moves a and b by little, and
# the residual reports it.
noise = [500, -500, 300, -300, 200, -200]
f = fit_round_trips(rts, empty, [y + n for y, n in zip(ir, noise)])
expect(close(f["a"], 950, 1.0) and close(f["b"], 60, 0.1), f"noisy fit a {f['a']} b {f['b']}")
expect(100 < f["rms"] < 500 and f["max"] < 1000, f"noisy fit residual {f['rms']} {f['max']}")
expect(f["a_stderr"] > 0 and f["b_stderr"] > 0, "noisy fit has no standard errors")

# Parts fitted over the same columns add up to the whole.
part1 = [400 * t + 50 * e + 1000 for t, e in zip(rts, empty)]
part2 = [y - p for y, p in zip(ir, part1)]
a1, b1, d1 = fit_with(f["model"], rts, empty, part1)
a2, b2, d2 = fit_with(f["model"], rts, empty, part2)
expect(d1 is None and d2 is None, "a fit without retries gave d")
expect(close(a1 + a2, 950, 1e-6) and close(b1 + b2, 60, 1e-6), f"parts {a1}+{a2}, {b1}+{b2}")
expect(close(a1, 400, 1e-6) and close(b1, 50, 1e-6), f"part 1 {a1} {b1}")

# Refused sends retried: a third column, d per retry; a column of no
# retries at all is left out (model "rt+polls", d None).
retries = [5, 800, 40, 0, 3000, 120]
f = fit_round_trips(rts, empty, [950 * t + 60 * e + 400 * r + 9000
                                 for t, e, r in zip(rts, empty, retries)], retries)
expect(f["model"] == "rt+polls+retries", f"model {f['model']}")
expect(close(f["a"], 950, 1e-6) and close(f["b"], 60, 1e-6) and close(f["d"], 400, 1e-6) and
       close(f["c"], 9000, 1e-3), f"retries fit {f}")
a1, b1, d1 = fit_with(f["model"], rts, empty, [400 * r for r in retries], retries)
expect(close(a1, 0, 1e-6) and close(b1, 0, 1e-6) and close(d1, 400, 1e-6), f"part {a1} {b1} {d1}")
f = fit_round_trips(rts, empty, ir, [0] * len(rts))
expect(f["model"] == "rt+polls" and f["d"] is None and close(f["a"], 950, 1e-6),
       f"no retries: {f}")

# Empty polls in the same share of every run: b is undetermined, a still fits.
share = [t // 10 for t in rts]
f = fit_round_trips(rts, share, [900 * t + 70 * e + 5000 for t, e in zip(rts, share)])
expect(f["model"] == "rt" and f["b"] is None, f"collinear polls gave model {f['model']}")
expect(close(f["a"], 907, 1e-6), f"collinear fit a {f['a']}")
# No empty polls at all (settled runs): the same.
f = fit_round_trips(rts, [0] * len(rts), [938 * t + 10 for t in rts])
expect(f["model"] == "rt" and close(f["a"], 938, 1e-6), f"no empty polls: {f}")
# One round-trip count cannot be fitted.
try:
    fit_round_trips([1000, 1000, 1000], [1, 2, 3], [1, 2, 3])
    expect(False, "one round-trip count did not raise")
except singular:
    expect(True, "")
# Counts far from zero beside the column of ones: centring keeps the solve
# accurate.
big = [10**9 + 1000 * i for i in range(5)]
f = fit_round_trips(big, [3, 1, 4, 1, 5], [3 * t + 11 * e + 7 for t, e in zip(big, [3, 1, 4, 1, 5])])
expect(close(f["a"], 3, 1e-6) and close(f["b"], 11, 1e-6), f"far counts: a {f['a']} b {f['b']}")
# least_squares() itself: a line through three points, one coefficient each.
r = least_squares([[1.0, 1.0], [2.0, 1.0], [3.0, 1.0]], [5.0, 7.0, 9.0])
expect(close(r["coef"][0], 2, 1e-9) and close(r["coef"][1], 3, 1e-9), f"line {r['coef']}")

# A callgrind file: the program calls LCI_recvm, LCI_sendm, LCI_progress
# (3 times, once into the native backend, whose first line comes from a
# system header) and LCI_sync_test; a clock read is "other". Names are
# compressed as callgrind writes them.
CALLGRIND = """# callgrind format
version: 1
cmd: /build/benchmarks/lci_pingpong --iters 2
positions: line
events: Ir
summary: 850

ob=(1) /build/benchmarks/lci_pingpong
fl=(1) /src/benchmarks/lci_pingpong.cpp
fn=(1) medium_pingpong
10 100
fi=(2) /src/lci/api/lci.hpp
11 7
fe=(1)
cob=(2) /build/lci/liblci.so
cfi=(3) /src/lci/api/two_sided_api.cpp
cfn=(2) LCI_recvm
calls=2 5
12 150
cob=(2)
cfi=(3)
cfn=(3) LCI_sendm
calls=2 5
13 200
cob=(2)
cfi=(4) /src/lci/api/runtime_api.cpp
cfn=(4) LCI_progress
calls=3 5
14 300
cob=(2)
cfi=(5) /src/lci/api/comp_api.cpp
cfn=(5) LCI_sync_test
calls=3 5
15 60
cob=(3) /usr/lib/libc.so.6
cfi=(6) ???
cfn=(6) clock_gettime
calls=1 0
16 20
+1 13

ob=(2)
fl=(3)
fn=(2)
5 100
fi=(7) /src/lci/match/match_table.hpp
6 50
fn=(3)
5 200
fn=(4)
5 120
fi=(8) /usr/include/c++/12/bits/atomic_base.h
6 30
fe=(4)
cfi=(9) /src/lci/backend/native/native.hpp
cfn=(7) native_poll
calls=1 3
7 150
fl=(8)
fn=(7)
3 10
fi=(9)
4 140
fl=(5)
fn=(5)
5 60

ob=(3)
fl=(6)
fn=(6)
0 20
"""
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "callgrind.out")
    with open(path, "w") as out:
        out.write(CALLGRIND)
    p = cgp.profile(path)
    expect(p.total == 850, f"total {p.total}")
    expect(sum(p.exclusive.values()) == 850, f"exclusive sum {sum(p.exclusive.values())}")
    expect(cgp.poll_count(p, "lci") == (3, 0), f"polls {cgp.poll_count(p, 'lci')}")
    ph = cgp.phase_costs(p, "lci")
    # arrival: LCI_progress with the backend's poll it calls; benchmark:
    # the program's own code (100 + 13 and 7 of inlined lci.hpp); other: the
    # clock read.
    want = {"send": 200, "receive post": 150, "arrival": 300, "test": 60, "benchmark": 120,
            "other": 20}
    expect(ph == want, f"phases {ph}, expected {want}")
    lay = cgp.layer_costs(p)
    want_layers = {"lci/api": 7 + 100 + 200 + 120 + 30 + 60, "lci/match": 50,
                   "lci/backend/native": 150, "libc": 20, "benchmark": 113}
    expect({k: v for k, v in lay.items() if v} == want_layers,
           f"layers {lay}, expected {want_layers}")
    expect(list(lay) == sorted(lay, key=cgp.layer_order), f"layer order {list(lay)}")

print(f"check_fit: {checks} checks passed")
