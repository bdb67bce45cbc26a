"""Ordinary least squares without numpy: the normal equations, solved by
Gaussian elimination with partial pivoting on scaled columns, and the fit
`compare instructions --fit` makes,
  Ir = a * round_trips + b * empty_polls + d * send_retries + c."""
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


# The columns a fit may use besides the round trips, in the order they are
# tried, with their short names (a fit's model joins the names it used).
EXTRA = (("empty_polls", "polls", "b"), ("send_retries", "retries", "d"))


def _fit(used, cols, y):
    """Least squares of y over the columns named in `used` (centred about
    their means, so that the normal equations stay well conditioned however
    far the counts are from zero) and ones. Returns the coefficients by
    column name, their standard errors, c and the residual."""
    means = {k: sum(cols[k]) / len(cols[k]) for k in used}
    rows = [[cols[k][i] - means[k] for k in used] + [1.0] for i in range(len(y))]
    r = least_squares(rows, y)
    coef = dict(zip(used, r["coef"]))
    se = dict(zip(used, r["stderr"] or [None] * len(used)))
    c = r["coef"][-1] - sum(coef[k] * means[k] for k in used)
    return coef, se, c, r


def fit_round_trips(round_trips, empty_polls, ir, send_retries=None):
    """Fits Ir = a * round_trips + b * empty_polls + d * send_retries + c
    over the runs. Returns {"a", "b", "d", "c", "rms", "max", "a_stderr",
    "b_stderr", "d_stderr", "model"}. A column is used only if it is
    independent of those before it (round trips, empty polls, retries):
    empty polls that are none, or the same share of the round trips in every
    run, or sends never retried, leave b (d) undetermined, None, and the
    model names the columns used ("rt", "rt+polls", "rt+polls+retries", ...).
    Needs two distinct round-trip counts."""
    if len(set(round_trips)) < 2:
        raise singular("the runs need at least two different round-trip counts")
    cols = {"round_trips": round_trips, "empty_polls": empty_polls,
            "send_retries": send_retries}
    used = ["round_trips"]
    for name, _, _ in EXTRA:
        if cols[name] is None:
            continue
        try:
            _fit(used + [name], cols, ir)
            used.append(name)
        except singular:
            pass
    coef, se, c, r = _fit(used, cols, ir)
    out = {"a": coef["round_trips"], "a_stderr": se["round_trips"], "c": c, "rms": r["rms"],
           "max": r["max"],
           "model": "+".join(["rt"] + [short for name, short, _ in EXTRA if name in used])}
    for name, _, letter in EXTRA:
        out[letter] = coef.get(name)
        out[letter + "_stderr"] = se.get(name)
    return out


def fit_with(model, round_trips, empty_polls, y, send_retries=None):
    """(a, b, d) of y over the same columns as a fit_round_trips() result of
    `model`: a part of the count (a phase, a layer) fitted alike, so that the
    parts' coefficients add up to the whole's (least squares is linear in y).
    A column the model leaves out gives None."""
    cols = {"round_trips": round_trips, "empty_polls": empty_polls,
            "send_retries": send_retries}
    names = model.split("+")[1:]
    used = ["round_trips"] + [name for name, short, _ in EXTRA if short in names]
    coef, _, _, _ = _fit(used, cols, y)
    return (coef["round_trips"],) + tuple(coef.get(name) for name, _, _ in EXTRA)
