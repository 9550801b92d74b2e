"""The contract docs/results-schema.json: a valid Draft 2020-12 schema that accepts what the writers
write (the fixture and the fake executables stand in for the C++ writer here; CTest checks the real
executables' JSON and CSV) and rejects what /2 forbids; tests/check_results.py adds the checks a
schema cannot express; tests/check_csv_header.py checks a CSV against x-csv-columns."""
import copy
import csv
import json
import os
import subprocess
import sys
import unittest
from pathlib import Path

from helpers import CSV_COLUMNS, FIXTURE, HERE, REPO, SCHEMA_FILE, TempDirCase

from hdb import contract

import check_csv_header
import check_results
import make_fixture

try:
    import jsonschema  # noqa: F401
except ImportError:
    jsonschema = None

CHECK = str(Path(REPO, "tests", "check_results.py"))
CHECK_CSV = str(Path(REPO, "tests", "check_csv_header.py"))


def fixture_doc(name):
    with Path(FIXTURE, "raw", name + ".json").open() as f:
        return json.load(f)


def run(*args):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120)


@unittest.skipIf(jsonschema is None, "the jsonschema library is missing (scripts/setup installs it into .venv)")
class SchemaTest(TempDirCase):
    def problems(self, doc, min_ok=0, ranks=0):
        return check_results.check_doc(doc, min_ok, ranks)[0]

    def assertRejected(self, doc, text, **kw):
        problems = self.problems(doc, **kw)
        self.assertTrue(any(text in p for p in problems), f"{text!r} not in {problems}")

    def test_the_schema_is_valid_and_carries_the_csv_columns(self):
        with Path(SCHEMA_FILE).open() as f:
            schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(schema)
        self.assertEqual(schema["properties"]["schema"], {"const": "hetdb-bench/2"})
        self.assertEqual(CSV_COLUMNS, schema["x-csv-columns"])
        self.assertEqual(check_csv_header.columns(), CSV_COLUMNS)
        self.assertEqual(len(set(CSV_COLUMNS)), len(CSV_COLUMNS))
        self.assertEqual(CSV_COLUMNS[:3], ["id", "benchmark", "backend"])

    def test_every_fixture_document_is_valid(self):
        names = sorted(p.name[:-5] for p in Path(FIXTURE, "raw").iterdir() if p.name.endswith(".json"))
        self.assertGreaterEqual(len(names), 10)
        for name in names:
            self.assertEqual(self.problems(fixture_doc(name)), [], name)
        p = run(CHECK, "--all", FIXTURE)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        n = len(names)
        self.assertIn(f"{n} documents, {n} CSV files beside them and 0 summary.csv checked, all valid", p.stdout)

    def test_the_committed_fixture_is_what_make_fixture_writes(self):
        out = str(Path(self.tmp, "regenerated"))
        make_fixture.main(out)
        for name in sorted(p.name for p in Path(FIXTURE, "raw").iterdir()):
            with Path(FIXTURE, "raw", name).open() as a, Path(out, "raw", name).open() as b:
                self.assertEqual(a.read(), b.read(), f"{name}: run python3 tests/driver/make_fixture.py")

    def test_what_hetdb_bench_2_forbids_is_rejected(self):
        base = fixture_doc("ra-cuda")
        r0 = base["results"][0]
        self.assertEqual(r0["status"], "ok")

        def case(mutate):
            doc = copy.deepcopy(base)
            mutate(doc, doc["results"][0])
            return doc
        self.assertRejected(case(lambda d, r: d.update(schema="hetdb-bench/1")), "expected 'hetdb-bench/2'")
        self.assertRejected(case(lambda d, r: r["params"].update(transfer="pinned")), "results[0].params")
        self.assertRejected(case(lambda d, r: r["params"].update(selectivity=True)), "results[0].params.selectivity")
        self.assertRejected(case(lambda d, r: r.update(transfer="dma")), "results[0].transfer")
        self.assertRejected(case(lambda d, r: r["phases"][0].update(kind="gpu")), "results[0].phases[0].kind")
        self.assertRejected(case(lambda d, r: r.pop("phases")), "'phases' is a required property")
        self.assertRejected(case(lambda d, r: r["throughput"].pop("transfer_gbps")), "'transfer_gbps' is a required")
        self.assertRejected(case(lambda d, r: r["verification"].pop("checked")), "'checked' is a required property")
        self.assertRejected(case(lambda d, r: r["verification"].update(checked=False)), "results[0].verification")
        self.assertRejected(case(lambda d, r: r["trials"][0].update(kernel_s=-1.0)), "results[0].trials[0].kernel_s")
        self.assertRejected(case(lambda d, r: r.update(id="select thrust 1M")), "results[0].id")
        self.assertRejected(case(lambda d, r: r.update(rank=0)), "Additional properties are not allowed")
        self.assertRejected(case(lambda d, r: (r.update(status="skipped", reason=""))), "results[0].reason")

    def test_the_checks_a_schema_cannot_express(self):
        base = fixture_doc("ra-cuda")

        def case(mutate):
            doc = copy.deepcopy(base)
            mutate(doc)
            return doc
        self.assertEqual(self.problems(base), [])
        self.assertRejected(case(lambda d: d["results"][1].update(id=d["results"][0]["id"])), "ids not unique")
        self.assertRejected(case(lambda d: d["results"][0]["trials"][1]["phases_s"].update(upload=1e-6)),
                            "not declared in phases[]: upload")
        self.assertRejected(case(lambda d: d["results"][0]["phases"].append({"name": "scan", "kind": "kernel"})),
                            "declared but in no trial: scan")
        self.assertRejected(case(lambda d: d["summary"].update(ok=1)), "does not match the status counts")
        self.assertRejected(case(lambda d: d["results"][0]["stats"]["kernel_s"].update(median=1.0)), "inconsistent")
        failed = case(lambda d: d["results"][0].update(status="failed", reason="verification failed"))
        failed["summary"] = {"ok": 4, "skipped": 1, "failed": 1}
        self.assertRejected(failed, "failed: verification failed")
        self.assertRejected(copy.deepcopy(base), "only 5 ok and verified results, expected at least 6", min_ok=6)
        self.assertRejected(copy.deepcopy(base), "expected an MPI block with 2 ranks", ranks=2)
        none = case(lambda d: d["results"][0].update(transfer="none"))
        self.assertRejected(none, "transfer is 'none' but bytes cross the bus")

    def test_the_ceiling_measured_again_is_checked(self):
        """Issue 51: the ceiling's samples, interval and spread, each result's ceiling_gbps and
        timed_at_s are optional (a document of an older executable, a peer's) and typed; check_results
        holds memory_copy_gbps to the median of the samples, spread to (max - min) / median, each
        result's ceiling_gbps to the sample nearest its timed_at_s and its pct_of_peak to that."""
        base = fixture_doc("ra-cuda")
        c = base["ceiling"]
        self.assertEqual((len(c["samples"]), c["interval_s"], c["spread"]), (2, 10.0, 0.0))
        self.assertTrue(all("timed_at_s" in r and "ceiling_gbps" in r["throughput"] for r in base["results"]
                            if r["trials"]))
        older = copy.deepcopy(base)  # as an executable before issue 51 wrote it
        for key in ("samples", "interval_s", "spread"):
            del older["ceiling"][key]
        for r in older["results"]:
            r.pop("timed_at_s", None)
            r.get("throughput", {}).pop("ceiling_gbps", None)
        self.assertEqual(self.problems(older), [])

        def case(mutate):
            doc = copy.deepcopy(base)
            mutate(doc, doc["results"][0])
            return doc
        self.assertRejected(case(lambda d, r: r.update(timed_at_s=-1.0)), "results[0].timed_at_s")
        self.assertRejected(case(lambda d, r: r["throughput"].update(ceiling_gbps="20")), "results[0].throughput")
        self.assertRejected(case(lambda d, r: d["ceiling"]["samples"].append({"at_s": 1.0})), "'gbps' is a required")
        self.assertRejected(case(lambda d, r: d["ceiling"].update(spread=-0.1)), "ceiling.spread")
        # A ceiling that moved: samples 3000, 2400, 2800 GB/s at 0, 10 and 20 s; the first result timed at
        # 9 s is against the second sample.
        moved = [{"at_s": 0.0, "gbps": 3000.0}, {"at_s": 10.0, "gbps": 2400.0}, {"at_s": 20.0, "gbps": 2800.0}]

        def moving(d, r):
            d["ceiling"].update(samples=moved, memory_copy_gbps=2800.0, spread=600.0 / 2800.0)
            r.update(timed_at_s=9.0)
            r["throughput"].update(ceiling_gbps=2400.0, pct_of_peak=100 * r["throughput"]["moved_gbps"] / 2400.0)
        self.assertEqual(self.problems(case(moving)), [])
        self.assertRejected(case(lambda d, r: (moving(d, r), d["ceiling"].update(memory_copy_gbps=2400.0))),
                            "memory_copy_gbps 2400.0 is not the median of its samples (2800.0)")
        self.assertRejected(case(lambda d, r: (moving(d, r), d["ceiling"].update(spread=0.0))),
                            "ceiling.spread 0.0 is not (max - min) / median")
        self.assertRejected(case(lambda d, r: (moving(d, r), d["ceiling"]["samples"].reverse())),
                            "not in the order of their times")
        self.assertRejected(case(lambda d, r: (moving(d, r), r.update(timed_at_s=2.0))),
                            "ceiling_gbps 2400.0 ('copy') is not the ceiling of the access mix its bytes declare at "
                            "its timed_at_s 2.0 (3000.0, 'copy')")
        self.assertRejected(case(lambda d, r: (moving(d, r), r.update(timed_at_s=2.0),  # before issue 46
                                               r["throughput"].pop("ceiling_pattern"))),
                            "ceiling_gbps 2400.0 is not the sample nearest to its timed_at_s 2.0 (3000.0)")
        self.assertRejected(case(lambda d, r: (moving(d, r), r["throughput"].update(ceiling_gbps=2800.0))),
                            "pct_of_peak")  # against another ceiling than its own
        self.assertRejected(case(lambda d, r: r["throughput"].update(ceiling_gbps=0.0)),
                            "is not 100 x moved_gbps / ceiling_gbps (0.0)")

    def test_the_ceiling_per_access_pattern_is_checked(self):
        """Issue 46: ceiling.patterns (typed, named), each result's bytes split (read + written =
        min_moved, random_read within read) and its ceiling_pattern are optional (a document of an older
        executable, a peer's); check_results holds each result's ceiling_gbps and ceiling_pattern to the
        ceiling of the mix its bytes declare (contract.case_ceiling: the patterns scaled by the copy
        sample nearest to it), and its pct_of_peak to that ceiling."""
        base = fixture_doc("ngram-cpu")  # reads only: against the read ceiling
        self.assertEqual(self.problems(base), [])
        r0 = base["results"][0]
        self.assertEqual((r0["throughput"]["ceiling_pattern"], r0["throughput"]["ceiling_gbps"]),
                         ("read", base["ceiling"]["patterns"]["read"]))
        older = copy.deepcopy(base)  # as an executable before issue 46 wrote it
        for key in ("patterns", "patterns_at_s", "patterns_definition"):
            del older["ceiling"][key]
        for r in older["results"]:
            for key in ("read", "written", "random_read", "random_item"):
                r["bytes"].pop(key)
            r["throughput"].pop("ceiling_pattern")
            r["throughput"].update(ceiling_gbps=20.0, pct_of_peak=100 * r["throughput"]["moved_gbps"] / 20.0)
        self.assertEqual(self.problems(older), [])

        def case(mutate):
            doc = copy.deepcopy(base)
            mutate(doc, doc["results"][0])
            return doc

        def against(r, gbps, label):
            r["throughput"].update(ceiling_gbps=gbps, ceiling_pattern=label,
                                   pct_of_peak=100 * r["throughput"]["moved_gbps"] / gbps if gbps else 0.0)
        self.assertRejected(case(lambda d, r: d["ceiling"]["patterns"].update(gather8=1.0)), "ceiling.patterns")
        self.assertRejected(case(lambda d, r: d["ceiling"]["patterns"].update(read=-1.0)), "ceiling.patterns.read")
        self.assertRejected(case(lambda d, r: r["bytes"].pop("written")), "results[0].bytes")
        self.assertRejected(case(lambda d, r: r["throughput"].update(ceiling_pattern=3)), "results[0].throughput")
        self.assertRejected(case(lambda d, r: r["bytes"].update(read=r["bytes"]["read"] - 8)),
                            "is not bytes.min_moved")
        self.assertRejected(case(lambda d, r: r["bytes"].update(random_read=r["bytes"]["read"] + 8)),
                            "more than bytes.read")
        # Against the copy where it reads only; its name without its number; a ceiling without a name.
        self.assertRejected(case(lambda d, r: against(r, 20.0, "read")), "ceiling_gbps 20.0 ('read') is not the "
                            "ceiling of the access mix its bytes declare at its timed_at_s 0.05 (26.0, 'read')")
        self.assertRejected(case(lambda d, r: against(r, 26.0, "copy..read (100% read)")), "(26.0, 'read')")
        self.assertRejected(case(lambda d, r: against(r, 26.0, "")), "a ceiling has a name")
        self.assertRejected(case(lambda d, r: r["throughput"].update(pct_of_peak=1.0)), "is not 100 x moved_gbps")
        # Random reads: half of its reads at random in 8-byte items, between gather4 and gather32.
        half = make_fixture.split_of(r0["bytes"]["min_moved"], read_share=1.0, random_share=0.5, item=8)
        gbps, label = contract.match_ceiling(half, base["ceiling"]["patterns"])
        self.assertEqual(label, "read + gather4..gather32")
        self.assertEqual(self.problems(case(lambda d, r: (r["bytes"].update(half), against(r, gbps, label)))), [])
        # A later copy sample at half the rate: the patterns scaled by it.
        self.assertEqual(self.problems(case(lambda d, r: (
            d["ceiling"].update(samples=[{"at_s": 0.0, "gbps": 20.0}, {"at_s": 1.0, "gbps": 10.0}],
                                memory_copy_gbps=15.0, spread=10.0 / 15.0),
            r.update(timed_at_s=0.9), against(r, 13.0, "read")))), [])

    def test_bus_copies_are_valid_with_no_kernel_time(self):
        doc = fixture_doc("bus-cuda")
        copies = [r for r in doc["results"] if r["test"] in ("h2d", "d2h")]
        self.assertEqual(len(copies), 12)
        for r in copies:
            self.assertEqual(r["variant"], "copy")
            self.assertEqual(r["stats"]["kernel_s"]["median"], 0)
            self.assertEqual(r["throughput"]["kernel_gbps"], 0)
            self.assertGreater(r["throughput"]["transfer_gbps"], 1)
        self.assertEqual(self.problems(doc), [])
        broken = copy.deepcopy(doc)
        broken["results"][0]["throughput"]["transfer_gbps"] = 0.0
        self.assertRejected(broken, "no throughput")

    def test_an_ep_mode_document_is_checked_per_rank(self):
        doc = fixture_doc("bus-cpu")
        ranks = []
        for rank in (0, 1):
            rr = copy.deepcopy(doc["results"])
            ranks.append({"rank": rank, "exit_code": 0, "host": "fixture", "device": f"dev{rank}",
                          "summary": dict(doc["summary"]), "results": rr})
        for r in doc["results"]:
            t = r["stats"]["kernel_s"]["median"]
            r["across_ranks"] = {"n": 2, "min": t, "max": t, "mean": t, "stddev": 0.0, "cv": 0.0, "outlier_ranks": [],
                                 "per_rank": [{"rank": 0, "kernel_median_s": t}, {"rank": 1, "kernel_median_s": t}]}
        doc["mpi"] = {"mode": "ep", "size": 2, "ranks": ranks}
        self.assertEqual(self.problems(doc, ranks=2), [])
        self.assertRejected(doc, "expected an MPI block with 4 ranks", ranks=4)
        bad = copy.deepcopy(doc)
        bad["mpi"]["ranks"][1]["results"][0]["trials"][0]["phases_s"]["x"] = 1.0
        self.assertRejected(bad, "rank 1: ")
        bad = copy.deepcopy(doc)
        bad["mpi"]["ranks"][1]["summary"]["ok"] = 0
        self.assertRejected(bad, "rank 1: summary")
        bad = copy.deepcopy(doc)
        bad["mpi"]["ranks"][0]["gpu"] = "x"
        self.assertRejected(bad, "mpi.ranks[0]")

    def test_command_line(self):
        path = str(Path(FIXTURE, "raw", "ra-cuda.json"))
        p = run(CHECK, path)
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertIn("5 verified results, schema ok", p.stdout)
        self.assertEqual(run(CHECK, path, "6").returncode, 1)
        p = run(CHECK, str(Path(self.tmp, "missing.json")))
        self.assertEqual(p.returncode, 0)
        self.assertIn("no results file", p.stdout)  # CTest's SKIP_REGULAR_EXPRESSION
        old = fixture_doc("ra-cuda")
        old["schema"] = "hetdb-bench/1"
        bad = str(Path(self.tmp, "old.json"))
        with Path(bad).open("w") as f:
            json.dump(old, f)
        p = run(CHECK, bad)
        self.assertEqual(p.returncode, 1)
        self.assertIn(f"{bad}: schema is 'hetdb-bench/1', expected 'hetdb-bench/2'", p.stdout)
        p = run(CHECK, path, "--csv", str(Path(FIXTURE, "raw", "ra-cuda.csv")))
        self.assertEqual(p.returncode, 0, p.stdout)
        p = run(CHECK, path, "--csv", str(Path(FIXTURE, "raw", "ra-cpu.csv")))
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("ra-cpu.csv: 12 rows for 6 results", p.stdout)
        p = run(CHECK, str(Path(FIXTURE, "raw", "ra-opencl.json")))  # measured with --no-verify
        self.assertEqual(p.returncode, 1)
        self.assertIn("only 0 ok and verified results", p.stdout)

    def test_an_earlier_executables_csv_without_ceiling_gbps(self):
        """A CSV with the columns before issue 51 (all but ceiling_gbps and ceiling_pattern), or before
        issue 46 (all but ceiling_pattern), beside a document whose results record none of the missing
        fields either (an executable built before it; the committed CPU reference's TPC-H OpenCL and
        DuckDB files), is taken, as the driver takes it into summary.csv; beside a document that
        records them, it is not."""
        path = str(Path(self.tmp, "ra-cpu.csv"))
        with Path(FIXTURE, "raw", "ra-cpu.csv").open(newline="") as f:
            now = list(csv.DictReader(f))
        for lacks in (("ceiling_gbps", "ceiling_pattern"), ("ceiling_pattern",)):
            with self.subTest(lacks=lacks):
                doc = fixture_doc("ra-cpu")
                with Path(path).open("w", newline="") as f:
                    w = csv.DictWriter(f, [c for c in CSV_COLUMNS if c not in lacks], lineterminator="\n")
                    w.writeheader()
                    w.writerows({k: v for k, v in r.items() if k not in lacks} for r in now)
                self.assertIn(f"missing {','.join(lacks)}", check_results.csv_problems(doc, path)[0])
                for r in doc["results"]:
                    (r.get("throughput") or {}).pop("ceiling_pattern", None)
                if len(lacks) == 2:  # a document with ceiling_gbps beside a CSV without it
                    self.assertIn("missing ceiling_gbps", check_results.csv_problems(doc, path)[0])
                for r in doc["results"]:
                    for k in lacks:
                        (r.get("throughput") or {}).pop(k, None)
                self.assertEqual(check_results.csv_problems(doc, path), [])
        with Path(path).open("w") as f:  # any other header is still refused
            f.write(",".join(CSV_COLUMNS[:-1]) + "\n")
        self.assertIn("header differs", check_results.csv_problems(doc, path)[0])

    def test_all_checks_every_document_and_csv_header_under_a_folder(self):
        root = str(Path(self.tmp, "runs"))
        run_dir = str(Path(root, "20260101-000000-quick"))
        make_fixture.main(run_dir)  # raw/ documents and CSVs, and run.json (no 'schema': not a document)
        with Path(run_dir, "summary.csv").open("w") as f:
            f.write(",".join(CSV_COLUMNS) + "\n")
        p = run(CHECK, "--all", root)
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertIn("11 documents, 11 CSV files beside them and 1 summary.csv checked, all valid", p.stdout)
        raw = str(Path(run_dir, "raw"))
        with Path(raw, "ra-cpu.csv").open() as f:
            lines = f.readlines()
        with Path(raw, "ra-cpu.csv").open("w") as f:
            f.writelines(lines[:1] + lines[2:] + lines[1:2])  # the first row moved to the end
        with Path(raw, "bus-cuda.csv").open("w") as f:
            f.write("benchmark,backend\n")
        Path(raw, "tpch-cpu.csv").unlink()
        with Path(raw, "bus-cpu.json.rank0").open("w") as f:
            f.write("{}")
        with Path(run_dir, "summary.csv").open("w") as f:
            f.write("id,benchmark\n")
        p = run(CHECK, "--all", root)
        self.assertEqual(p.returncode, 1)
        self.assertIn("ra-cpu.csv: row 1 is (rank, id, status, transfer) ('0', 'select/parallel[", p.stdout)
        self.assertIn("bus-cuda.csv: header differs", p.stdout)
        self.assertIn("no CSV file", p.stdout)
        self.assertIn("bus-cpu.json.rank0: schema is None", p.stdout)
        self.assertIn("summary.csv: header differs", p.stdout)
        empty = str(Path(self.tmp, "empty"))
        Path(empty).mkdir(parents=True)
        p = run(CHECK, "--all", empty)
        self.assertEqual(p.returncode, 1)
        self.assertIn("no results documents found", p.stdout)


class CsvHeaderTest(TempDirCase):
    def write(self, name, header):
        path = str(Path(self.tmp, name))
        with Path(path).open("w", newline="") as f:
            csv.writer(f, lineterminator="\n").writerow(header)
            f.write("x\n")
        return path

    def test_header_check(self):
        good = self.write("good.csv", CSV_COLUMNS)
        p = run(CHECK_CSV, good)
        self.assertEqual(p.returncode, 0, p.stdout)
        swapped = list(CSV_COLUMNS)
        swapped[1], swapped[2] = swapped[2], swapped[1]
        for header, text in ((CSV_COLUMNS[:-1], "missing reason"), (CSV_COLUMNS + ["x"], "unexpected x"),
                             (swapped, "column 2 is 'backend', expected 'benchmark'")):
            p = run(CHECK_CSV, self.write("bad.csv", header))
            self.assertEqual(p.returncode, 1)
            self.assertIn(text, p.stdout)
        self.assertEqual(run(CHECK_CSV, str(Path(self.tmp, "none.csv"))).returncode, 1)

    def test_the_fake_executable_writes_the_contract_columns(self):
        out = str(Path(self.tmp, "x.json"))
        env = dict(os.environ, FAKE_NAME="hdb-ra-cpu", FAKE_LOG=str(Path(self.tmp, "log")))
        p = subprocess.run([sys.executable, str(Path(HERE, "fake_bench.py")), "ok", "--json", out, "--csv",
                            out[:-5] + ".csv"], capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(run(CHECK_CSV, out[:-5] + ".csv").returncode, 0)
        if jsonschema is not None:
            p = run(CHECK, out, "2")
            self.assertEqual(p.returncode, 0, p.stdout)


if __name__ == "__main__":
    unittest.main()
