"""hdb.combine: gpu-check's per-benchmark runs made one run for one report. Entries keep their order
and name their part; a part stopped while running makes the whole incomplete; clashing files and
folders that are not runs are refused, never overwritten."""
import json
import os

from helpers import TempDirCase

from hdb import combine, report

import make_fixture


def _run(root, run_id, bench, state="finished", status="ok"):
    d = os.path.join(root, run_id)
    os.makedirs(os.path.join(d, "raw"))
    os.makedirs(os.path.join(d, "logs"))
    doc = make_fixture.document(bench, "cpu", [make_fixture.record("copy" if bench == "bus" else "select", "serial",
                                                                    1 << 20, 1e-3)], 20.0)
    with open(os.path.join(d, "raw", f"{bench}-cpu.json"), "w") as f:
        json.dump(doc, f)
    with open(os.path.join(d, "logs", f"{bench}-cpu.log"), "w") as f:
        f.write("log\n")
    manifest = {"run_id": run_id, "state": state, "started_utc": f"2026-11-26T00:0{len(bench)}:00Z",
                "command_line": f"run-all --benchmarks {bench}",
                "entries": [{"name": f"{bench}-cpu", "benchmark": bench, "backend": "cpu", "status": status,
                             "reason": "", "log": f"logs/{bench}-cpu.log"}]}
    if state == "finished":
        manifest["finished_utc"] = f"2026-11-26T00:1{len(bench)}:00Z"
    with open(os.path.join(d, "run.json"), "w") as f:
        json.dump(manifest, f)
    return d


class CombineTest(TempDirCase):
    def test_finished_parts_make_one_finished_run(self):
        a, b = _run(self.tmp, "r1", "bus"), _run(self.tmp, "r2", "ra")
        out = os.path.join(self.tmp, "all")
        m = combine.combine(out, [a, b])
        self.assertEqual(m["state"], "finished")
        self.assertEqual([e["name"] for e in m["entries"]], ["bus-cpu", "ra-cpu"])
        self.assertEqual([e["combined_from"] for e in m["entries"]], ["r1", "r2"])
        self.assertEqual(m["started_utc"], "2026-11-26T00:02:00Z")   # the earliest start ("ra")
        self.assertEqual(m["finished_utc"], "2026-11-26T00:13:00Z")  # the latest end ("bus")
        self.assertEqual(sorted(os.listdir(os.path.join(out, "raw"))), ["bus-cpu.json", "ra-cpu.json"])
        self.assertEqual(json.load(open(os.path.join(out, "run.json")))["run_id"], "all")
        report.generate(out, stream=open(os.devnull, "w"))
        md = open(os.path.join(out, "report.md")).read()
        self.assertIn("bus", md)
        self.assertIn("ra", md)
        self.assertNotIn("incomplete", md.split("## ")[0])

    def test_a_part_stopped_while_running_makes_it_incomplete(self):
        a = _run(self.tmp, "r1", "bus")
        b = _run(self.tmp, "r2", "ngram", state="running", status="running")
        m = combine.combine(os.path.join(self.tmp, "all"), [a, b])
        self.assertEqual(m["state"], "incomplete")
        self.assertEqual([x["name"] for x in m["incomplete"]], ["ngram-cpu"])
        self.assertIn("stopped from outside", m["incomplete"][0]["reason"])
        self.assertNotIn("finished_utc", m)
        # Parts that all ended, one with a failed entry: the whole is incomplete, ended at the last
        # part's end, and the first part lends it no finished time of its own.
        c = _run(self.tmp, "r3", "tpch", status="failed")
        m = combine.combine(os.path.join(self.tmp, "all2"), [a, c])
        self.assertEqual(m["state"], "incomplete")
        self.assertNotIn("finished_utc", m)
        self.assertEqual(m["ended_utc"], "2026-11-26T00:14:00Z")

    def test_refuses_clashes_non_runs_and_a_used_folder(self):
        a = _run(self.tmp, "r1", "bus")
        again = _run(os.path.join(self.tmp, "other"), "r1", "bus")
        with self.assertRaisesRegex(SystemExit, "raw/bus-cpu.json is in two of the runs"):
            combine.combine(os.path.join(self.tmp, "clash"), [a, again])
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "clash")))
        os.makedirs(os.path.join(self.tmp, "not-a-run"))
        with self.assertRaisesRegex(SystemExit, "not a run directory"):
            combine.combine(os.path.join(self.tmp, "x"), [a, os.path.join(self.tmp, "not-a-run")])
        used = os.path.join(self.tmp, "used")
        os.makedirs(used)
        open(os.path.join(used, "keep"), "w").close()
        with self.assertRaisesRegex(SystemExit, "not empty"):
            combine.combine(used, [a])
        self.assertEqual(os.listdir(used), ["keep"])
        self.assertEqual(combine.main([]), 2)
