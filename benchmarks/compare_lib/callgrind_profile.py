"""Reading a callgrind output file into what `compare instructions --fit`
needs: every function's exclusive Ir by source file, and every call edge
(caller, call-site file, callee) with its call count and inclusive Ir.

The format (valgrind's docs/callgrind-format): `ob=`, `fl=`, `fi=`/`fe=`
(the file of inlined code), `fn=` set the context of the cost lines that
follow; `cob=`, `cfi=`/`cfl=`, `cfn=` name a callee and `calls=COUNT POS`
is followed by one cost line, the inclusive cost of those calls (not the
caller's own). Names may be compressed: `(id) name` defines id, `(id)`
refers to it."""
import os
import re

_NAME = re.compile(r"^\((\d+)\)(?: (.*))?$")


class profile:
    """One callgrind file. After loading:
      total                     Ir of the whole file (its summary line, else
                                the sum of the exclusive costs)
      exclusive[(fn, file)]     Ir of fn's own instructions from that source
                                file (inlined code carries its header's file)
      fn_object[fn], fn_file[fn] the object and primary file (fl=) of fn
      calls[(caller, site_file, callee)] = [count, inclusive Ir]
    """

    def __init__(self, path):
        self.path = path
        self.total = None
        self.exclusive = {}
        self.fn_object = {}
        self.fn_file = {}
        self.calls = {}
        self.command = None
        self._load(path)

    def _load(self, path):
        names = {"ob": {}, "fl": {}, "fn": {}}
        kind_of = {"ob": "ob", "cob": "ob", "fl": "fl", "fi": "fl", "fe": "fl", "cfi": "fl",
                   "cfl": "fl", "fn": "fn", "cfn": "fn"}

        def name(key, value):
            m = _NAME.match(value)
            if not m:
                return value
            table = names[kind_of[key]]
            if m.group(2) is not None:
                table[m.group(1)] = m.group(2)
            return table.get(m.group(1), f"({m.group(1)})")

        npos = 1
        ob = fl = cur_file = fn = None
        callee = None
        pending_call = None  # (caller, site file, callee, count) awaiting its cost line
        summed = 0
        with open(path) as f:
            for line in f:
                line = line.rstrip("\n")
                if not line or line.startswith("#"):
                    continue
                c = line[0]
                if c.isdigit() or c in "+-*":
                    fields = line.split()
                    ir = int(fields[npos]) if len(fields) > npos else 0
                    if pending_call is not None:
                        key = pending_call[:3]
                        entry = self.calls.setdefault(key, [0, 0])
                        entry[0] += pending_call[3]
                        entry[1] += ir
                        pending_call = None
                    else:
                        key = (fn, cur_file)
                        self.exclusive[key] = self.exclusive.get(key, 0) + ir
                        summed += ir
                    continue
                key, _, value = line.partition("=")
                if key in ("ob",):
                    ob = name(key, value)
                elif key == "fl":
                    fl = cur_file = name(key, value)
                elif key in ("fi", "fe"):
                    cur_file = name(key, value)
                elif key == "fn":
                    fn = name(key, value)
                    cur_file = fl
                    self.fn_object.setdefault(fn, ob)
                    self.fn_file.setdefault(fn, fl)
                elif key in ("cob", "cfi", "cfl"):
                    name(key, value)
                elif key == "cfn":
                    callee = name(key, value)
                elif key == "calls":
                    pending_call = (fn, cur_file, callee, int(value.split()[0]))
                elif ":" in line:
                    hkey, _, hval = line.partition(":")
                    if hkey == "cmd" and self.command is None:
                        self.command = hval.strip()
                    elif hkey == "positions":
                        npos = len(hval.split())
                    elif hkey in ("summary", "totals") and self.total is None:
                        self.total = int(hval.split()[0])
        if self.total is None:
            self.total = summed

    def calls_to(self, pattern):
        """Calls to the functions whose name matches the regex `pattern`
        from functions that do not match it (a function's calls to itself or
        to an inner alias are not counted twice)."""
        rx = re.compile(pattern)
        return sum(cnt for (caller, _, callee), (cnt, _) in self.calls.items()
                   if rx.search(callee or "") and not rx.search(caller or ""))


# ---- phases ---------------------------------------------------------------------------

# A phase rule: (phase, callee regex, call-site file regex, caller regex),
# None matching anything. A call from the benchmark program into a library
# takes the phase of the first rule it matches.
PHASES = ("send", "receive post", "arrival", "test")
RULES = {
    "lci": [("send", r"^LCI_sendm$", None, None),
            ("receive post", r"^LCI_recvm$", None, None),
            ("arrival", r"^LCI_progress$", None, None),
            ("test", r"^LCI_sync_test$", None, None)],
    "lci2": [("send", r"^lci::detail::post_send", None, None),
             ("receive post", r"^lci::detail::post_recv", None, None),
             ("arrival", r"^lci::detail::progress", None, None),
             ("test", r"^lci::detail::sync_test", None, None)],
    # Raw libfabric: fi_injectdata in rdm_endpoint::send; fi_recv (the
    # re-post of the buffer a message arrived in) and fi_cq_read in
    # rdm_endpoint::poll. fi_cq_read both progresses and reports the
    # completion: it is the arrival, and there is no separate test.
    "ofi": [("send", None, None, r"rdm_endpoint::send\("),
            ("receive post", None, r"/fi_endpoint\.h$", r"rdm_endpoint::poll\("),
            ("arrival", None, r"/fi_eq\.h$", None)],
}
# The polls of a wait: calls of the poll function (first regex), except
# from the callers of the second, the retry of a refused send (raw
# libfabric's shm provider refuses an inject until a poll has progressed the
# previous one, more often the busier the machine); those are counted apart,
# and their cost shows under arrival.
POLL = {"lci": (r"^LCI_progress$", r"post_retry"),
        "lci2": (r"^lci::detail::progress", r"send_not_done"),
        "ofi": (r"rdm_endpoint::poll\(\)", r"rdm_endpoint::send\(")}


def _same_file(a, b):
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except (TypeError, ValueError):
        return False


def program_object(p):
    """The object (ob=) of the profiled program itself."""
    prog = (p.command or "").split()
    objects = {o for o in p.fn_object.values() if o}
    if prog:
        for o in objects:
            if _same_file(o, prog[0]):
                return o
    # Without a cmd: line, the object the most functions come from.
    return max(objects, key=lambda o: sum(1 for x in p.fn_object.values() if x == o),
               default=None)


def _reentrant(p, program):
    """Functions outside the program whose calls lead back into it (the C
    start-up code that calls main): their inclusive cost is the program's."""
    inside = {fn for fn, o in p.fn_object.items() if o == program}
    back = set()
    changed = True
    while changed:
        changed = False
        for (caller, _, callee) in p.calls:
            if caller not in inside and caller not in back and (callee in inside or callee in back):
                back.add(caller)
                changed = True
    return back


def poll_count(p, impl):
    """(polls of the program's waits, polls of its sends' retries): its
    calls of the poll function, told apart by the caller (POLL)."""
    rx, retry = (re.compile(x) for x in POLL[impl])
    waits = retries = 0
    for (caller, _, callee), (cnt, _) in p.calls.items():
        if rx.search(callee or "") and not rx.search(caller or ""):
            if retry.search(caller or ""):
                retries += cnt
            else:
                waits += cnt
    return waits, retries


def phase_costs(p, impl):
    """Ir of the profile split into the phases of `impl` (inclusive cost of
    the program's calls into the libraries, by RULES), "benchmark" (the
    program's own instructions: the loop, the waits' bookkeeping, inlined
    header code) and "other" (the rest: clock reads, the closing barrier).
    The parts add up to p.total. A phase `impl` has no rule for (raw
    libfabric's test: fi_cq_read is its arrival) is left out."""
    program = program_object(p)
    back = _reentrant(p, program)
    rules = [(ph, *(re.compile(x) if x else None for x in rx)) for ph, *rx in RULES[impl]]
    cost = {ph: 0 for ph in PHASES if any(r[0] == ph for r in rules)}
    cost["benchmark"] = sum(ir for (fn, _), ir in p.exclusive.items()
                            if p.fn_object.get(fn) == program)
    for (caller, site, callee), (_, ir) in p.calls.items():
        if p.fn_object.get(caller) != program or p.fn_object.get(callee) == program:
            continue
        if callee in back:
            continue
        for ph, callee_rx, site_rx, caller_rx in rules:
            if ((callee_rx is None or callee_rx.search(callee or "")) and
                    (site_rx is None or site_rx.search(site or "")) and
                    (caller_rx is None or caller_rx.search(caller or ""))):
                cost[ph] += ir
                break
    cost["other"] = p.total - sum(cost.values())
    return cost


# ---- layers ---------------------------------------------------------------------------

# The order layers are shown in; a directory of lci/ not named here comes
# after the named lci/ ones.
LAYERS = ("lci/api", "lci/cxx", "lci/core", "lci/match", "lci/comp", "lci/mem", "lci/util",
          "lci/wait", "lci/backend", "lci/backend/native", "lci/backend/ofi", "lci (other)",
          "libfabric", "libc", "libstdc++", "benchmark", "other")
_LCI_DIR = re.compile(r".*/lci/(backend/[A-Za-z0-9_]+|[A-Za-z0-9_]+)/[^/]+$")


def layer_order(name):
    """Sort key of a layer name: LAYERS' order, other lci/ directories
    before "lci (other)"."""
    if name in LAYERS:
        return (LAYERS.index(name), "")
    return (LAYERS.index("lci (other)") - 0.5, name)


def _file_layer(path):
    """The layer of a source file, or None if the path does not tell."""
    if not path or path == "???":
        return None
    path = os.path.normpath(path)
    m = _LCI_DIR.match(path)
    if m:
        return "lci/" + m.group(1)
    if re.search(r"/benchmarks/[^/]+$", path):
        return "benchmark"
    if "/rdma/" in path or "libfabric" in path:
        return "libfabric"
    if re.search(r"/lci/[^/]+$", path):
        return "lci (other)"
    return None


def _object_layer(ob, program):
    if ob is None:
        return "other"
    if ob == program:
        return "benchmark"
    base = os.path.basename(ob)
    if base.startswith("libfabric"):
        return "libfabric"
    if base.startswith(("libc.", "libc-", "ld-linux", "libpthread", "libm.")) or "vdso" in base:
        return "libc"
    if base.startswith("libstdc++"):
        return "libstdc++"
    if base.startswith(("liblci", "liblct")):
        return "lci (other)"
    return "other"


def layer_costs(p):
    """Exclusive Ir by layer: the source directory of each instruction
    (inlined code counts for the header it came from, lci/api/lci.hpp for the
    LCI 2 interface inlined into the program); code from a system header
    (the C++ library's atomics, say) counts for the function's own file (or,
    if that is a system header too, the project file most of the function
    comes from), and code without a file for its object (libfabric, libc). Adds up to the sum
    of exclusive costs."""
    program = program_object(p)
    # A function's home layer: its own file's, else (its first line came
    # from a system header) that of the project file most of it comes from.
    home = {}
    for fn in p.fn_object:
        home[fn] = _file_layer(p.fn_file.get(fn))
    best = {}
    for (fn, path), ir in p.exclusive.items():
        layer = _file_layer(path)
        if layer and home.get(fn) is None and ir > best.get(fn, (0, None))[0]:
            best[fn] = (ir, layer)
    for fn, (_, layer) in best.items():
        home[fn] = layer
    cost = {}
    for (fn, path), ir in p.exclusive.items():
        layer = (_file_layer(path) or home.get(fn) or
                 _object_layer(p.fn_object.get(fn), program))
        cost[layer] = cost.get(layer, 0) + ir
    return {l: cost[l] for l in sorted(cost, key=layer_order)}
