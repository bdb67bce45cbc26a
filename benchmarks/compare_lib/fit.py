"""Ordinary least squares without numpy: the normal equations, solved by
Gaussian elimination with partial pivoting on scaled columns, and the fit
`compare instructions --fit` makes,
  Ir = a * round_trips + b * empty_polls + c."""
import math


class singular(ValueError):
    """The columns of the design are (nearly) linearly dependent."""


def solve(m, v, tol=1e-10):
    """x with m x = v (m square, lists of floats); raises singular when a
    pivot is below tol times the largest entry of its column."""
    n = len(m)
    a = [list(map(float, row)) + [float(v[i])] for i, row in enumerate(m)]
    scale = [max(abs(a[r][k]) for r in range(n)) or 1.0 for k in range(n)]
    for k in range(n):
        p = max(range(k, n), key=lambda r: abs(a[r][k]))
        if abs(a[p][k]) <= tol * scale[k]:
            raise singular(f"column {k} depends on the others")
        a[k], a[p] = a[p], a[k]
        for r in range(k + 1, n):
            f = a[r][k] / a[k][k]
            if f:
                for j in range(k, n + 1):
                    a[r][j] -= f * a[k][j]
    x = [0.0] * n
    for k in range(n - 1, -1, -1):
        x[k] = (a[k][n] - sum(a[k][j] * x[j] for j in range(k + 1, n))) / a[k][k]
    return x


def inverse(m):
    """The inverse of a small square matrix (columns of solve())."""
    n = len(m)
    cols = [solve(m, [1.0 if i == j else 0.0 for i in range(n)]) for j in range(n)]
    return [[cols[j][i] for j in range(n)] for i in range(n)]


def least_squares(rows, y):
    """Coefficients beta minimising sum (y_i - rows_i . beta)^2, with
    residual: {"coef": beta, "rms": root mean square residual, "max": largest
    absolute residual, "stderr": standard error of each coefficient (None
    when there are no more observations than coefficients)}. Columns are
    scaled to a largest entry of 1 before the normal equations are formed, so
    that a column of round trips (thousands) and a column of ones do not
    spoil the pivots. Raises singular when the columns are dependent or there
    are fewer observations than coefficients."""
    n, k = len(rows), len(rows[0])
    if n < k:
        raise singular(f"{n} observations for {k} coefficients")
    s = [max(abs(r[j]) for r in rows) or 1.0 for j in range(k)]
    xs = [[r[j] / s[j] for j in range(k)] for r in rows]
    xtx = [[sum(r[i] * r[j] for r in xs) for j in range(k)] for i in range(k)]
    xty = [sum(r[i] * yy for r, yy in zip(xs, y)) for i in range(k)]
    z = solve(xtx, xty)
    coef = [z[j] / s[j] for j in range(k)]
    res = [yy - sum(c * x for c, x in zip(coef, r)) for r, yy in zip(rows, y)]
    sse = sum(e * e for e in res)
    stderr = None
    if n > k:
        var = sse / (n - k)
        inv = inverse(xtx)
        stderr = [math.sqrt(max(var * inv[j][j], 0.0)) / s[j] for j in range(k)]
    return {"coef": coef, "rms": math.sqrt(sse / n), "max": max(abs(e) for e in res),
            "stderr": stderr}


def _columns(model, round_trips, empty_polls):
    """The design of a fit: round trips (and empty polls) about their means,
    and ones; centring keeps the normal equations well conditioned however
    far the counts are from zero. Returns (rows, means)."""
    mt = sum(round_trips) / len(round_trips)
    me = sum(empty_polls) / len(empty_polls)
    if model == "rt+polls":
        return [[t - mt, e - me, 1.0] for t, e in zip(round_trips, empty_polls)], (mt, me)
    return [[t - mt, 1.0] for t in round_trips], (mt, me)


def _fit(model, round_trips, empty_polls, y):
    rows, (mt, me) = _columns(model, round_trips, empty_polls)
    r = least_squares(rows, y)
    if model == "rt+polls":
        a, b, c0 = r["coef"]
        se = r["stderr"] or [None, None, None]
    else:
        (a, c0), b = r["coef"], 0.0
        se = (r["stderr"] or [None, None])[:1] + [None]
    out = {"a": a, "b": b if model == "rt+polls" else None, "c": c0 - a * mt - b * me,
           "rms": r["rms"], "max": r["max"], "a_stderr": se[0], "b_stderr": se[1],
           "model": model}
    return out


def fit_round_trips(round_trips, empty_polls, ir):
    """Fits Ir = a * round_trips + b * empty_polls + c over the runs.
    Returns {"a", "b", "c", "rms", "max", "a_stderr", "b_stderr", "model"}:
    model "rt+polls" when the three columns are independent; "rt" when the
    empty polls are (nearly) a linear function of the round trips (none at
    all, or the same share in every run), which leaves b undetermined (None)
    and fits Ir = a * round_trips + c. Needs two distinct round-trip counts."""
    if len(set(round_trips)) < 2:
        raise singular("the runs need at least two different round-trip counts")
    try:
        return _fit("rt+polls", round_trips, empty_polls, ir)
    except singular:
        return _fit("rt", round_trips, empty_polls, ir)


def fit_with(model, round_trips, empty_polls, y):
    """(a, b) of y over the same columns as a fit_round_trips() result of
    `model`: a part of the count (a phase, a layer) fitted alike, so that the
    parts' a (and b) add up to the whole's (least squares is linear in y)."""
    f = _fit(model, round_trips, empty_polls, y)
    return f["a"], f["b"]
