"""hdb.combine: gpu-check's per-benchmark runs made one run for one report. Entries keep their order
and name their part; a part stopped while running makes the whole incomplete; clashing files and
folders that are not runs are refused, never overwritten."""
import json
import os
from pathlib import Path

from helpers import TempDirCase

from hdb import combine, report

import make_fixture


def _run(root, run_id, bench, state="finished", status="ok"):
    d = str(Path(root, run_id))
    Path(d, "raw").mkdir(parents=True)
    Path(d, "logs").mkdir(parents=True)
    doc = make_fixture.document(bench, "cpu", [make_fixture.record("copy" if bench == "bus" else "select", "serial",
                                                                    1 << 20, 1e-3)], 20.0)
    with Path(d, "raw", f"{bench}-cpu.json").open("w") as f:
        json.dump(doc, f)
    with Path(d, "logs", f"{bench}-cpu.log").open("w") as f:
        f.write("log\n")
    manifest = {"run_id": run_id, "state": state, "started_utc": f"2026-11-26T00:0{len(bench)}:00Z",
                "command_line": f"run-all --benchmarks {bench}",
                "entries": [{"name": f"{bench}-cpu", "benchmark": bench, "backend": "cpu", "status": status,
                             "reason": "", "log": f"logs/{bench}-cpu.log"}]}
    if state == "finished":
        manifest["finished_utc"] = f"2026-11-26T00:1{len(bench)}:00Z"
    with Path(d, "run.json").open("w") as f:
        json.dump(manifest, f)
    return d


class CombineTest(TempDirCase):
    def test_finished_parts_make_one_finished_run(self):
        a, b = _run(self.tmp, "r1", "bus"), _run(self.tmp, "r2", "ra")
        out = str(Path(self.tmp, "all"))
        m = combine.combine(out, [a, b])
        self.assertEqual(m["state"], "finished")
        self.assertEqual([e["name"] for e in m["entries"]], ["bus-cpu", "ra-cpu"])
        self.assertEqual([e["combined_from"] for e in m["entries"]], ["r1", "r2"])
        self.assertEqual(m["started_utc"], "2026-11-26T00:02:00Z")   # the earliest start ("ra")
        self.assertEqual(m["finished_utc"], "2026-11-26T00:13:00Z")  # the latest end ("bus")
        self.assertEqual(sorted(p.name for p in Path(out, "raw").iterdir()), ["bus-cpu.json", "ra-cpu.json"])
        self.assertEqual(json.load(Path(out, "run.json").open())["run_id"], "all")
        report.generate(out, stream=Path(os.devnull).open("w"))
        md = Path(out, "report.md").open().read()
        self.assertIn("bus", md)
        self.assertIn("ra", md)
        self.assertNotIn("incomplete", md.split("## ")[0])

    def test_a_part_stopped_while_running_makes_it_incomplete(self):
        a = _run(self.tmp, "r1", "bus")
        b = _run(self.tmp, "r2", "ngram", state="running", status="running")
        m = combine.combine(str(Path(self.tmp, "all")), [a, b])
        self.assertEqual(m["state"], "incomplete")
        self.assertEqual([x["name"] for x in m["incomplete"]], ["ngram-cpu"])
        self.assertIn("stopped from outside", m["incomplete"][0]["reason"])
        self.assertNotIn("finished_utc", m)
        # Parts that all ended, one with a failed entry: the whole is incomplete, ended at the last
        # part's end, and the first part lends it no finished time of its own.
        c = _run(self.tmp, "r3", "tpch", status="failed")
        m = combine.combine(str(Path(self.tmp, "all2")), [a, c])
        self.assertEqual(m["state"], "incomplete")
        self.assertNotIn("finished_utc", m)
        self.assertEqual(m["ended_utc"], "2026-11-26T00:14:00Z")

    def test_refuses_clashes_non_runs_and_a_used_folder(self):
        a = _run(self.tmp, "r1", "bus")
        again = _run(str(Path(self.tmp, "other")), "r1", "bus")
        with self.assertRaisesRegex(SystemExit, "raw/bus-cpu.json is in two of the runs"):
            combine.combine(str(Path(self.tmp, "clash")), [a, again])
        self.assertFalse(Path(self.tmp, "clash").exists())
        Path(self.tmp, "not-a-run").mkdir(parents=True)
        with self.assertRaisesRegex(SystemExit, "not a run directory"):
            combine.combine(str(Path(self.tmp, "x")), [a, str(Path(self.tmp, "not-a-run"))])
        used = str(Path(self.tmp, "used"))
        Path(used).mkdir(parents=True)
        Path(used, "keep").open("w").close()
        with self.assertRaisesRegex(SystemExit, "not empty"):
            combine.combine(used, [a])
        self.assertEqual([p.name for p in Path(used).iterdir()], ["keep"])
        self.assertEqual(combine.main([]), 2)
