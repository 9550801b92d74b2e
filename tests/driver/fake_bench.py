#!/usr/bin/env python3
"""A stand-in for an hdb-<bench>-<backend> executable in the driver tests.

usage: fake_bench.py MODE [executable options...]
MODE: ok, crash, hang, skip, fail, and for the fault tests: hang-tree (hangs with a child process of
its own, as mpirun has ranks), usage (a bad option: '<exe>: error: ...' then the usage hint, exit 2),
error (exit 1 after an error line and a trailing line), nojson (exit 0 without writing its JSON),
badjson (exit 0 after writing a JSON that is cut short), diskfull (its second write fails as on a full
disk: exit 1 with the harness's error line, its JSON holding the first case, complete: false), slow
(takes 3 s between its two cases, then finishes: a run stopped by a too short time limit). With --list it
prints its two case ids and exits 0, whatever MODE.
Writes a hetdb-bench/2 document to --json and the CSV to --csv (the columns of
docs/results-schema.json, through make_fixture) after every case, as the harness does: its ceiling with
the ceilings per access pattern (issue 46), its cases declaring their bytes read and written, each
against the ceiling of its mix (copy/serial a copy; copy/parallel reads three quarters, a quarter of
them random 8-byte items: an interpolation with a gather part). It appends its
name, pid and arguments to $FAKE_LOG (and the pid of its child in hang-tree mode), then behaves as
MODE says. With --no-verify its results are marked not checked, as the harness marks them."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(os.path.normpath(Path(__file__).absolute())).parent))
import make_fixture  # noqa: E402  (the fixture's record/document/CSV builders)

COPY_GBPS = 20.0  # the fake's copy ceiling (every sample), and its patterns' copy


def _arg(args, name):
    return args[args.index(name) + 1] if name in args else None


def _first_size(args):
    """The first of --sizes (32K, 1M, 256M) as bytes, 32K without it: the size of the fake's cases."""
    text = (_arg(args, "--sizes") or "32K").split(",")[0]
    unit = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    return int(text[:-1] if unit > 1 else text) * unit


def _replace(path, text):
    with Path(path + ".tmp").open("w", newline="") as f:
        f.write(text)
    Path(path + ".tmp").replace(path)


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    name = os.environ.get("FAKE_NAME", "fake")
    bench, backend = name.split("-", 2)[1:3]  # hdb-ra-cuda-host: backend cuda-host
    def note(**kw):
        with Path(os.environ["FAKE_LOG"]).open("a") as f:
            f.write(json.dumps(dict(name=name, pid=os.getpid(), **kw)) + "\n")

    note(args=args)
    if "--list" in args:  # the ids of its two cases, as an executable lists them (run-all --dry-run)
        print(f"{bench}/fake@{_arg(args, '--sizes') or '32K'}\n{bench}/fake2@{_arg(args, '--sizes') or '32K'}")
        return 0
    if mode == "skip":
        print("skipped: no fake device (driver test)")
        return 77
    exe = f"hdb-{bench}-{backend}"
    if mode == "usage":
        print(f"{exe}: error: --frobnicate: unknown option (driver test)", file=sys.stderr)
        print("Run with --help for the options and their allowed values.", file=sys.stderr)
        return 2
    if mode == "nojson":
        print("summary: 0 ok, 0 skipped, 0 failed (and no JSON written)")
        return 0
    json_path, csv_path = _arg(args, "--json"), _arg(args, "--csv")
    if mode == "badjson":
        with Path(json_path).open("w") as f:
            f.write('{"schema": "hetdb-bench/2", "benchmark": "' + bench + '", "results": [{"id": ')
        return 0
    checked = "--no-verify" not in args
    results = []
    patterns = make_fixture.patterns_for(COPY_GBPS)

    def write(incomplete="running"):
        doc = make_fixture.document(bench, backend, results, COPY_GBPS, incomplete_reason=incomplete,
                                    patterns=patterns)
        if json_path:
            _replace(json_path, json.dumps(doc))
        if csv_path:
            _replace(csv_path, make_fixture.csv_text(doc))

    size = _first_size(args)
    copy = make_fixture.split_of(2 * size)  # each input byte read once and written once
    mixed = make_fixture.split_of(2 * size, read_share=0.75, random_share=0.25, item=8)
    results.append(make_fixture.record("copy", "serial", size, 1e-5, checked=checked, ceiling=COPY_GBPS, split=copy,
                                       patterns=patterns))
    write()
    if mode == "diskfull":
        # The harness replaces its files whole: a write that fails leaves the previous one (complete: false).
        print(f"{exe}: error: {json_path}: cannot write (No space left on device)", file=sys.stderr)
        return 1
    if mode == "error":
        write("stopped by an error: cannot open /nonexistent/queries.txt")
        print(f"{exe}: error: cannot open /nonexistent/queries.txt: No such file or directory (driver test)",
              file=sys.stderr)
        print("results so far are kept", file=sys.stderr)
        return 1
    if mode == "hang-tree":
        child = subprocess.Popen(["sleep", "120"])
        note(child=child.pid)
        time.sleep(120)
    if mode == "crash":
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGSEGV)
    if mode == "hang":
        time.sleep(120)
    if mode == "slow":
        time.sleep(3)
    if mode == "fail":
        results.append(make_fixture.record("copy", "parallel", size, 0, status="failed", split=mixed,
                                           reason="verification failed: word 3 differs (driver test)"))
        write(None)
        return 1
    results.append(make_fixture.record("copy", "parallel", size, 6e-6, checked=checked, ceiling=COPY_GBPS,
                                       split=mixed, patterns=patterns))
    write(None)
    print("summary: 2 ok, 0 skipped, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
