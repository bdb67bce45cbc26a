"""Number formats, compare.csv and Markdown rows."""
import csv
import os


def fmt(v, d=3):
    return "-" if v is None else f"{v:.{d}f}"


def human_size(b):
    if b >= 1048576 and b % 1048576 == 0:
        return f"{b // 1048576}M"
    if b >= 1024 and b % 1024 == 0:
        return f"{b // 1024}K"
    return str(b)


def csv_cell(v):
    """A CSV field: empty for None, floats to 4 decimals."""
    return "" if v is None else (f"{v:.4f}" if isinstance(v, float) else v)


def write_csv(path, comments, head, rows):
    """A CSV file: the comment lines first, then the head and the rows."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        for line in comments:
            f.write(line + "\n")
        w.writerow(head)
        for row in rows:
            w.writerow([csv_cell(v) for v in row])


def markdown_row(cells):
    return "| " + " | ".join(cells) + " |"


def markdown_rule(columns):
    """The rule under a Markdown head: a left-aligned first column, then
    `columns` right-aligned ones."""
    return "|---|" + "---:|" * columns
