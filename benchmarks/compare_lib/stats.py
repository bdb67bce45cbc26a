"""Reading the benchmarks' output and reducing repetitions to one figure."""
import statistics


def parse_csv(text):
    """Rows of the benchmark CSV: 5 fields (impl,test,size,value,unit) or 7
    (impl,test,mode,size,threads,total,per_thread)."""
    rows = []
    for line in text.splitlines():
        if not line or line.startswith("#") or line.startswith("impl"):
            continue
        f = line.strip().split(",")
        try:
            if len(f) == 5:
                rows.append({"impl": f[0], "test": f[1], "mode": "", "size": int(f[2]),
                             "threads": 1, "value": float(f[3]), "unit": f[4]})
            elif len(f) == 7:
                rows.append({"impl": f[0], "test": f[1], "mode": f[2], "size": int(f[3]),
                             "threads": int(f[4]), "value": float(f[5]), "unit": "Mmsg/s"})
        except ValueError:
            pass
    return rows


def config_lines(texts, skip):
    """The '# ' configuration lines of program outputs, minus those starting
    with one of `skip`."""
    out = []
    for text in texts:
        for line in text.splitlines():
            if line.startswith("# ") and not any(line.startswith(s) for s in skip):
                out.append(line)
    return out


def count_capped(texts):
    """How many measurements of these outputs stopped at --max-time."""
    return sum(1 for t in texts for line in t.splitlines() if line.startswith("# capped"))


def ratio(x, y):
    return None if x is None or y is None or y == 0 else x / y


def median_or_none(values):
    return statistics.median(values) if values else None


def pick(values, how, higher_is_better):
    """The figure over repetitions: their median, or with how == "best" the
    best of them (the highest where higher is better, else the lowest)."""
    if how == "best":
        return max(values) if higher_is_better else min(values)
    return statistics.median(values)


def spread(values):
    """Largest / smallest of the values (None without a positive smallest)."""
    return None if not values or min(values) <= 0 else max(values) / min(values)


def value_range(values):
    """[smallest, largest] of the values (None without any): the spread
    bars of the plots."""
    return [min(values), max(values)] if values else None
