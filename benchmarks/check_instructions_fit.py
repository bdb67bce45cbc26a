#!/usr/bin/env python3
"""benchmarks.compare.instructions.fit: `compare instructions --fit` at tiny
round-trip counts. Its JSON document must give every program the four
phases, a positive fitted count per round trip and layers that include the
benchmark's own. Exits 77 (the test's SKIP_RETURN_CODE) without valgrind.
Usage: check_instructions_fit.py COMPARE OUTDIR [compare options...]
Prints "check_instructions_fit: 3 programs fitted"."""
import json
import os
import shutil
import subprocess
import sys

PHASES = ("send", "receive post", "arrival", "test")
IMPLS = ("lci", "lci2", "ofi")


def fail(msg):
    print(f"check_instructions_fit: FAILED: {msg}", file=sys.stderr)
    sys.exit(1)


def main():
    if len(sys.argv) < 3:
        fail("usage: check_instructions_fit.py COMPARE OUTDIR [compare options...]")
    compare, out = sys.argv[1], sys.argv[2]
    if not shutil.which("valgrind") or not shutil.which("callgrind_annotate"):
        print("check_instructions_fit: valgrind is not installed, skipped")
        return 77
    doc_path = os.path.join(out, "instructions.json")
    if os.path.exists(doc_path):
        os.remove(doc_path)
    cmd = [compare, "instructions", "--fit", "--out", out] + sys.argv[3:]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)} exited {r.returncode}")
    for word in ("per round trip", "per empty poll", "by phase") + PHASES:
        if word not in r.stdout:
            fail(f"the output does not show '{word}'")
    with open(doc_path) as f:
        doc = json.load(f)
    if not doc.get("context", {}).get("fit"):
        fail("the document's context does not say fit")
    for impl in IMPLS:
        fit = doc.get("fit", {}).get(impl)
        if not fit:
            fail(f"no fit for {impl}")
        if not fit["a"] > 0:
            fail(f"{impl}: fitted instructions per round trip {fit['a']} is not positive")
        if doc["per_round_trip"].get(impl) != round(fit["a"]):
            fail(f"{impl}: per_round_trip {doc['per_round_trip'].get(impl)} is not round(a)")
        for ph in PHASES:
            # Raw libfabric's test is its arrival (fi_cq_read): null.
            if ph not in fit["phases"] or (fit["phases"][ph]["per_round_trip"] is None and
                                           (impl, ph) != ("ofi", "test")):
                fail(f"{impl}: no phase '{ph}'")
        if "benchmark" not in fit["layers"]:
            fail(f"{impl}: no layer 'benchmark'")
        # The parts are fitted over the same columns: they add up to a.
        total = sum(v["per_round_trip"] or 0 for v in fit["phases"].values())
        if abs(total - fit["a"]) > 0.1 * len(fit["phases"]) + 1e-6:
            fail(f"{impl}: the phases add up to {total}, a is {fit['a']}")
        if len(fit["runs"]) < 2 or any(r["polls"] < r["iters"] for r in fit["runs"]):
            fail(f"{impl}: runs {fit['runs']}: every round trip polls at least once")
    print(f"check_instructions_fit: {len(IMPLS)} programs fitted")
    return 0


if __name__ == "__main__":
    sys.exit(main())
