#!/usr/bin/env python3
"""A stand-in for an hdb-<bench>-<backend> executable in the driver tests.

usage: fake_bench.py MODE [executable options...]   (MODE: ok, crash, hang, skip, fail)
Writes a hetdb-bench/2 document to --json and the CSV to --csv (the columns of
docs/results-schema.json, through make_fixture) after every case, as the harness does, appends its
name and arguments to $FAKE_LOG, then behaves as MODE says."""
import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixture  # noqa: E402  (the fixture's record/document/CSV builders)


def _arg(args, name):
    return args[args.index(name) + 1] if name in args else None


def _replace(path, text):
    with open(path + ".tmp", "w", newline="") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    name = os.environ.get("FAKE_NAME", "fake")
    bench, backend = name.split("-")[1:3]
    with open(os.environ["FAKE_LOG"], "a") as f:
        f.write(json.dumps({"name": name, "args": args}) + "\n")
    if mode == "skip":
        print("skipped: no fake device (driver test)")
        return 77
    json_path, csv_path = _arg(args, "--json"), _arg(args, "--csv")
    results = []

    def write():
        doc = make_fixture.document(bench, backend, results, 20.0)
        if json_path:
            _replace(json_path, json.dumps(doc))
        if csv_path:
            _replace(csv_path, make_fixture.csv_text(doc))

    results.append(make_fixture.record("copy", "serial", 32 << 10, 1e-5))
    write()
    if mode == "crash":
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGSEGV)
    if mode == "hang":
        time.sleep(120)
    if mode == "fail":
        results.append(make_fixture.record("copy", "parallel", 32 << 10, 0, status="failed",
                                           reason="verification failed: word 3 differs (driver test)"))
        write()
        return 1
    results.append(make_fixture.record("copy", "parallel", 32 << 10, 6e-6))
    write()
    print("summary: 2 ok, 0 skipped, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
