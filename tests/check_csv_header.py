#!/usr/bin/env python3
"""Checks that a CSV written by an hdb-* executable (--csv FILE) has exactly the columns of the one
CSV format, the list "x-csv-columns" in docs/results-schema.json; and that the driver's summary.csv
has those columns followed by the driver's own, "x-summary-csv-columns" (a summary.csv of an earlier
driver, without them, is accepted too).

usage: check_csv_header.py CSV_FILE [CSV_FILE...]   (a file named summary.csv is checked as the driver's)
Exit 0 when every file's header equals the list, 1 otherwise (a missing file is a failure).
Standard library only."""
import csv
import json
import os
import sys
from pathlib import Path

SCHEMA = str(Path(os.path.normpath(Path(__file__).absolute())).parents[1] / "docs" / "results-schema.json")


def columns(schema_path=SCHEMA):
    """The CSV column list, read from the JSON Schema (its top-level keyword x-csv-columns)."""
    with Path(schema_path).open() as f:
        return list(json.load(f)["x-csv-columns"])


def summary_columns(schema_path=SCHEMA):
    """summary.csv's columns: x-csv-columns, then the driver's x-summary-csv-columns (above_ceiling, key,
    the medians' intervals)."""
    with Path(schema_path).open() as f:
        schema = json.load(f)
    return list(schema["x-csv-columns"]) + list(schema.get("x-summary-csv-columns", []))


def summary_header_problem(path, schema_path=SCHEMA):
    """None when `path` has the header of the driver's summary.csv (or, written by an earlier driver,
    the executables' columns followed by the first of the driver's: none, above_ceiling before key
    was added, above_ceiling and key before the medians' intervals), else what is wrong (measured
    against the current columns)."""
    base, full = columns(schema_path), summary_columns(schema_path)
    for n in range(len(base), len(full)):
        if header_problem(path, full[:n]) is None:
            return None
    return header_problem(path, full)


def header_problem(path, expected=None):
    """None when the first line of `path` is the expected header, else what is wrong."""
    expected = expected if expected is not None else columns()
    try:
        with Path(path).open(newline="") as f:
            header = next(csv.reader(f), None)
    except OSError as e:
        return f"{path}: cannot read: {e.strerror}"
    if header is None:
        return f"{path}: empty file, no header"
    if header == expected:
        return None
    missing = [c for c in expected if c not in header]
    unexpected = [c for c in header if c not in expected]
    detail = []
    if missing:
        detail.append("missing " + ",".join(missing))
    if unexpected:
        detail.append("unexpected " + ",".join(unexpected))
    if not detail:
        first = next(i for i, (a, b) in enumerate(zip(header, expected, strict=False)) if a != b)
        detail.append(f"column {first + 1} is {header[first]!r}, expected {expected[first]!r} (order differs)")
    return f"{path}: header differs from x-csv-columns of docs/results-schema.json: " + "; ".join(detail)


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    expected = columns()
    bad = 0
    for path in argv:
        summary = Path(path).name == "summary.csv"
        problem = summary_header_problem(path) if summary else header_problem(path, expected)
        if problem:
            print(f"check_csv_header: {problem}")
            bad += 1
        else:
            what = "summary.csv" if summary else f"{len(expected)} columns"
            print(f"check_csv_header: {path}: header ok ({what})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
