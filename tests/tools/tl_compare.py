#!/usr/bin/env python3
"""Compare magpie's TraceLens-compatible CSVs with TraceLens's own (goldens).

usage: tl_compare.py [--exact] GOLDEN_DIR OURS_DIR SHEET [SHEET ...]

For every sheet: the same header (column names and order), the same number
of rows, and cell by cell: numbers within 1e-6 relative (or 1e-9 absolute),
other text equal after normalising Python reprs (tuples, lists, dicts, None,
numpy wrappers such as np.float64(1.5)) with ast.literal_eval, as TraceLens's
own regression tests do; the spellings of a missing value ('', 'nan', 'None')
are equal to each other. --exact: numbers must be the same float, bit for
bit (also inside reprs; 180 and 180.0 are the same number). Prints one line
per sheet; exit 1 on any mismatch.
"""
import ast
import csv
import math
import re
import sys

csv.field_size_limit(1 << 30)

NP_WRAP = re.compile(r"np\.(?:float|int)\d*\(([^()]*)\)")


def parse(text):
    t = NP_WRAP.sub(r"\1", text)
    try:
        return True, ast.literal_eval(t)
    except Exception:
        return False, text


def stable_key(v):
    """Order for lists of dicts that does not depend on float noise."""
    if isinstance(v, dict):
        return tuple(sorted((k, repr(x)) for k, x in v.items() if not isinstance(x, float)))
    return (repr(v),)


EXACT = False


def num_equal(a, b):
    if math.isnan(a) and math.isnan(b):
        return True
    if EXACT:
        return a == b
    return abs(a - b) <= max(1e-9, 1e-6 * abs(a))


def deep_equal(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return num_equal(float(a), float(b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return False
        if a and all(isinstance(x, dict) for x in a) and all(isinstance(x, dict) for x in b):
            a, b = sorted(a, key=stable_key), sorted(b, key=stable_key)
        return all(deep_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(deep_equal(a[k], b[k]) for k in a)
    return a == b


def as_number(text):
    try:
        return float(text)
    except ValueError:
        return None


# Cells pandas reads as missing (NaN). TraceLens's goldens spell a missing
# value '' or 'nan' or 'None' depending on the pandas version that wrote them.
MISSING = {"", "nan", "NaN", "None"}


def cell_equal(g, o):
    if g == o:
        return True
    if g in MISSING and o in MISSING:
        return True
    gn, on = as_number(g), as_number(o)
    if gn is not None and on is not None:
        return num_equal(gn, on)
    okg, vg = parse(g)
    oko, vo = parse(o)
    if okg and oko:
        return deep_equal(vg, vo)
    return False


def read(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


# TraceLens sorts these sheets by one column (DataFrame.sort_values -> nargsort
# -> numpy's default quicksort argsort), which is not stable and leaves rows
# with equal sort values in an order that depends on the CPU (numpy 2.4 on an
# AVX2 machine reorders ties of even 4 rows; introsort elsewhere keeps small
# arrays in order); such ties are compared as unordered blocks. Sheets sorted
# by several columns (short_kernels_summary, ops_unique_args, the perf and
# unified sheets) go through pandas' stable lexsort and are compared in order.
SORT_COLUMN = {
    "kernel_summary": "Kernel duration (µs)_sum",
    "ops_summary": "total_direct_kernel_time_sum",
    "ops_summary_by_category": "total_direct_kernel_time_ms",
}


def rows_equal(header, gr, orow):
    return [(header[j], gc, oc) for j, (gc, oc) in enumerate(zip(gr, orow)) if not cell_equal(gc, oc)]


def tie_blocks_match(header, g, o, col):
    j = header.index(col)
    i = 0
    while i < len(g):
        k = i
        while k + 1 < len(g) and g[k + 1][j] == g[i][j]:
            k += 1
        rest = list(o[i:k + 1])
        # inside a block of equal sort keys the running total depends on
        # the order pandas' unstable sort left the block in
        cum = "Cumulative Percentage (%)"
        for gr in g[i:k + 1]:
            hit = next((x for x in rest
                        if all(c == cum for c, _, _ in rows_equal(header, gr, x))), None)
            if hit is None:
                return False
            rest.remove(hit)
        i = k + 1
    return True


def compare(golden, ours, sheet):
    try:
        g = read(f"{golden}/{sheet}.csv")
    except FileNotFoundError:
        return True, f"{sheet}: no golden, skipped"
    try:
        o = read(f"{ours}/{sheet}.csv")
    except FileNotFoundError:
        return False, f"{sheet}: MISSING in output"
    g = [r for r in g if r]
    o = [r for r in o if r]
    if not g and not o:
        return True, f"{sheet}: ok (empty)"
    if g[0] != o[0]:
        return False, f"{sheet}: header differs\n  golden: {g[0]}\n  ours:   {o[0] if o else None}"
    if len(g) != len(o):
        return False, f"{sheet}: {len(o) - 1} rows, golden has {len(g) - 1}"
    bad = []
    for i, (gr, orow) in enumerate(zip(g[1:], o[1:]), start=1):
        for j, (gc, oc) in enumerate(zip(gr, orow)):
            if not cell_equal(gc, oc):
                bad.append((i, g[0][j], gc, oc))
    if bad and sheet in SORT_COLUMN and SORT_COLUMN[sheet] in g[0]:
        if tie_blocks_match(g[0], g[1:], o[1:], SORT_COLUMN[sheet]):
            return True, f"{sheet}: ok ({len(g) - 1} rows; equal-time ties in another order)"
    if bad:
        lines = [f"  row {i} col {c!r}: golden {gc[:120]!r} ours {oc[:120]!r}" for i, c, gc, oc in bad[:8]]
        return False, f"{sheet}: {len(bad)} cell(s) differ\n" + "\n".join(lines)
    return True, f"{sheet}: ok ({len(g) - 1} rows)"


def main():
    global EXACT
    args = sys.argv[1:]
    if args and args[0] == "--exact":
        EXACT = True
        args = args[1:]
    if len(args) < 3:
        print(__doc__)
        return 2
    golden, ours, sheets = args[0], args[1], args[2:]
    ok_all = True
    for s in sheets:
        ok, msg = compare(golden, ours, s)
        ok_all &= ok
        print(("ok   " if ok else "FAIL ") + msg)
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
