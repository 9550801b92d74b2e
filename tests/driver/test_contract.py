"""hdb.contract agrees with the C++ harness (issue 28): the one Python module that makes ids,
parameter text, sizes, statistics, the stopping rule and the derived figures.

- Against real executables (a build's bin/: $HDB_BUILD_DIR, else build-host/ or build/ of the
  checkout; skipped with the reason when none is built): each runs a few tiny cases with --json, and
  for every recorded case the module makes the same id from the recorded test, variant, typed params,
  transfer and size, the same size_label, the same statistics and throughput from the recorded
  trials (exactly: the same doubles), the same trial count by the stopping rule, and the same CSV;
  `--list` with the same options prints exactly those ids.
- The cold / warm / hot protocol (issue 29): where an executable records `protocol`, it is the one
  the module makes for the same options (no cold pass under --warmup 0, its note
  contract.NO_COLD_NOTE; with --warmup 2 --flush-caches a cold trial, one warm-up pass, timed_as
  warm and the flush text contract.flush_description makes from the same sysfs cache size).
- Pure unit checks of the edges the C++ decides (case.cpp param_text, sizes.cpp, stats.cpp,
  caches.cpp, session.cpp's order of the passes)."""
import csv
import io
import json
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

from helpers import CSV_COLUMNS, REPO, TempDirCase

from hdb import contract

# Options every run gets: few passes, a short time, so the stopping rule decides by each of its arms.
RULE = {"passes": 2, "max_passes": 5, "max_time": 0.05, "target_noise": 0.05}
RULE_ARGS = ["--warmup", "0", "--passes", "2", "--max-passes", "5", "--max-time", "0.05", "--target-noise", "0.05"]
# (executable, options): params of every kind (strings, integers, floats such as 1e-06 and 0.25), a
# skipped case, cases outside the size sweep (tpch on its tables) and with a bus (bus on OpenCL).
RUNS = [
    ("hdb-ra-cpu", ["--sizes", "32K", "--only", "select/serial,join/serial,reduce/serial",
                    "--selectivity", "0.5,1e-06,0.25,1", "--match-rate", "0.3", "--fanout", "1,4"]),
    ("hdb-bus-cpu", ["--sizes", "32K,48K"]),
    ("hdb-merge-cpu", ["--sizes", "32K", "--only", "delta_dict/serial", "--types", "u32,str"]),
    ("hdb-tpch-cpu", ["--sizes", "32K", "--only", "A/ra-serial", "--data", "random,tpch", "--sf", "0.01"]),
    ("hdb-ngram-cpu", ["--sizes", "32K", "--only", "index/build,search/baseline", "--errors", "0,2",
                       "--query-count", "3"]),
    ("hdb-bus-opencl", ["--sizes", "32K", "--only", "h2d/*,d2h/*", "--transfer", "both"]),
]


def build_dir():
    """The build whose executables the agreement is checked with, or None."""
    for d in (os.environ.get("HDB_BUILD_DIR"), Path(REPO, "build-host"), Path(REPO, "build")):
        if d and any(os.access(Path(d, "bin", exe), os.X_OK) for exe, _ in RUNS):
            return Path(d)
    return None


BUILD = build_dir()


@unittest.skipUnless(BUILD, "no build with hdb-*-cpu executables ($HDB_BUILD_DIR, build-host/, build/)")
class AgreesWithTheExecutables(TempDirCase):
    def run_exe(self, exe, args):
        path = Path(BUILD, "bin", exe)
        if not os.access(path, os.X_OK):
            self.skipTest(f"{exe} is not built in {BUILD}")
        out, csv_out = Path(self.tmp, exe + ".json"), Path(self.tmp, exe + ".csv")
        p = subprocess.run([path, *args, *RULE_ARGS, "--quiet", "--json", out, "--csv", csv_out],
                           capture_output=True, text=True, timeout=240)
        if p.returncode == contract.EXIT_SKIP:
            self.skipTest(f"{exe}: {p.stdout.strip()} {p.stderr.strip()}")
        self.assertIn(p.returncode, (contract.EXIT_OK, contract.EXIT_FAILED), p.stderr)
        listed = subprocess.run([path, *args, *RULE_ARGS, "--list"], capture_output=True, text=True, timeout=120)
        self.assertEqual(listed.returncode, contract.EXIT_OK, listed.stderr)
        doc = json.loads(out.read_text())
        csv_text = csv_out.read_text()
        ids = [ln.split(" (skipped")[0] for ln in listed.stdout.splitlines() if ln.strip()]
        return doc, csv_text, ids

    def check(self, exe, args):
        doc, csv_text, listed = self.run_exe(exe, args)
        self.assertEqual(doc["schema"], contract.SCHEMA)
        rule = contract.StoppingRule(RULE["passes"], RULE["max_passes"], RULE["max_time"], RULE["target_noise"])
        ceiling = doc["ceiling"]["memory_copy_gbps"]
        samples = doc["ceiling"].get("samples")  # issue 51; an executable built before it measured once
        if samples is not None:
            self.assertEqual(ceiling, contract.ceiling_median(samples))
            self.assertEqual(doc["ceiling"]["spread"], contract.ceiling_spread(samples))
        made = []
        self.assertTrue(doc["results"], exe)
        for r in doc["results"]:
            with self.subTest(exe=exe, id=r["id"]):
                # The id from the typed fields (the declared order of the names is the id's own:
                # results-schema.md; declared_params checks the rest by making the id again).
                params = contract.declared_params(r)
                self.assertEqual(set(params), set(r["params"]))
                made.append(contract.case_id(r["test"], r["variant"], params, r["transfer"], r["size_bytes"]))
                self.assertEqual(made[-1], r["id"])
                self.assertEqual(contract.size_label(r["size_bytes"]), r["size_label"])
                if not r["trials"]:
                    self.assertNotIn("stats", r)
                    continue
                # Against the result's own ceiling (the sample nearest to it) where it records one.
                figures = contract.result_figures(r, ceiling)
                self.assertEqual(figures["stats"], r["stats"])            # exactly: the same doubles
                self.assertEqual(figures["throughput"], r["throughput"])
                timed = r["stats"]["kernel_s"]["median"] > 0
                if "ceiling_pattern" in r["throughput"]:  # issue 46: the ceiling of the mix it declares
                    self.assertEqual((r["throughput"]["ceiling_gbps"], r["throughput"]["ceiling_pattern"]),
                                     contract.case_ceiling(doc["ceiling"], r) if timed else (0.0, ""))
                elif samples is not None:  # ...which is the sample nearest to its timed passes (0: no kernel time)
                    nearest = contract.nearest_ceiling(samples, r["timed_at_s"])
                    self.assertEqual(r["throughput"]["ceiling_gbps"], nearest if timed else 0.0)
                self.assertEqual(rule.passes_taken(r["trials"]), len(r["trials"]))
                if "protocol" in r:  # executables built before issue 29 record none
                    self.assertEqual(r["protocol"], dict(r["protocol"], **contract.Passes([]).protocol()))
        self.assertEqual(made, listed, "--list prints the ids the module makes, in the same order")
        # The CSV the executable wrote is the module's CSV of its document; an executable built before
        # a column was added (contract.CSV_COLUMNS_ADDED) writes the columns before it, and its
        # document lacks that field too.
        header = next(csv.reader(io.StringIO(csv_text)), [])
        columns = next((cs for cs, added in contract.earlier_csv_headers(CSV_COLUMNS) if cs == header and not any(
            k in (r.get("throughput") or {}) for r in doc["results"] for k in added)), CSV_COLUMNS)
        self.assertEqual(list(csv.reader(io.StringIO(contract.csv_text(doc, columns)))),
                         list(csv.reader(io.StringIO(csv_text))))
        return doc

    def test_ra(self):
        doc = self.check(*RUNS[0])
        ids = {r["id"] for r in doc["results"]}
        self.assertIn("select/serial[dist=uniform,key=32,selectivity=1e-06]@32K", ids)
        self.assertIn("join/serial[dist=uniform,key=32,match=0.3,fanout=4,input=sorted]@32K", ids)
        self.assertIn("join/serial[dist=uniform,key=32,match=0.3,fanout=4,input=unsorted]@32K", ids)

    def test_bus(self):
        self.check(*RUNS[1])

    def test_merge(self):
        self.check(*RUNS[2])

    def test_tpch(self):
        doc = self.check(*RUNS[3])
        self.assertTrue(any(r["size_bytes"] == 0 and "@" not in r["id"] for r in doc["results"]), "tables: no sweep")

    def test_ngram(self):
        self.check(*RUNS[4])

    def test_bus_with_a_bus(self):
        doc = self.check(*RUNS[5])
        self.assertTrue({r["transfer"] for r in doc["results"]} >= {"pageable", "pinned"})

    def test_cold_pass_and_flush(self):
        """--warmup 2 --flush-caches: the cold pass kept as a trial, one untimed warm-up, the timed
        passes warm after the flush the module describes alike (harness/caches.cpp)."""
        path = Path(BUILD, "bin", "hdb-ra-cpu")
        if not os.access(path, os.X_OK):
            self.skipTest(f"hdb-ra-cpu is not built in {BUILD}")
        out = Path(self.tmp, "cold.json")
        p = subprocess.run([path, "--sizes", "32K", "--only", "select/serial", "--warmup", "2", "--passes", "2",
                            "--max-passes", "2", "--flush-caches", "--quiet", "--json", out],
                           capture_output=True, text=True, timeout=240)
        if p.returncode == contract.EXIT_USAGE and "flush-caches" in p.stderr:
            self.skipTest(f"{path} predates --flush-caches (issue 29)")
        self.assertEqual(p.returncode, contract.EXIT_OK, p.stderr)
        results = [r for r in json.loads(out.read_text())["results"] if r["status"] == "ok"]
        self.assertTrue(results)
        for r in results:
            with self.subTest(id=r["id"]):
                pr = r["protocol"]
                self.assertEqual(set(pr["cold"]), {"h2d_s", "kernel_s", "d2h_s", "total_s", "phases_s"})
                self.assertEqual((pr["warmup_passes"], pr["timed_as"]), (1, "warm"))
                self.assertEqual(pr["flush"], contract.flush_description(contract.last_level_cache_bytes()))
                self.assertTrue(pr["cold_note"])


class Edges(unittest.TestCase):
    def test_param_text_is_case_cpps(self):
        for v, want in ((0.5, "0.5"), (1e-06, "1e-06"), (3.0, "3"), (100.0, "100"), (0.1, "0.1"),
                        (1 / 3, "0.3333333333333333"), (2.5e-05, "2.5e-05"), (1e15, "1e+15"), (1.5e15, "1.5e+15"),
                        (123456.789, "123456.789"), (-0.0, "-0"), (-2.0, "-2"), (3, "3"), (0, "0"),
                        ("uniform", "uniform"), (True, "true"), (False, "false")):
            with self.subTest(v=v):
                self.assertEqual(contract.param_text(v), want)

    def test_case_id(self):
        c = contract.case_id
        self.assertEqual(c("memcpy", "parallel", {}, "none", 64 << 20), "memcpy/parallel@64M")
        self.assertEqual(c("h2d", "copy", {}, "pageable", 1 << 30), "h2d/copy[transfer=pageable]@1G")
        self.assertEqual(c("select", "tuned", {"dist": "uniform", "selectivity": 0.5}, "pinned", 256 << 20),
                         "select/tuned[dist=uniform,selectivity=0.5,transfer=pinned]@256M")
        self.assertEqual(c("A", "ra", [("data", "tpch"), ("sf", 1.0)], "pinned"),
                         "A/ra[data=tpch,sf=1,transfer=pinned]")
        self.assertEqual(c("join", "sql", [("match", 0.5), ("fanout", 1)], "none", 1000),
                         "join/sql[match=0.5,fanout=1]@1000")
        with self.assertRaises(ValueError):
            c("x", "y", {}, "both")

    def test_declared_params_refuses_an_id_that_is_not_its_fields(self):
        r = {"id": "join/x[match=0.5,fanout=1]@1M", "test": "join", "variant": "x",
             "params": {"fanout": 1, "match": 0.5}, "transfer": "none", "size_bytes": 1 << 20}
        self.assertEqual(list(contract.declared_params(r).items()), [("match", 0.5), ("fanout", 1)])
        with self.assertRaises(ValueError):
            contract.declared_params(dict(r, size_bytes=2 << 20))
        with self.assertRaises(ValueError):
            contract.declared_params(dict(r, params={"fanout": 1, "match": 0.25}))

    def test_sizes_are_sizes_cpps(self):
        for n, text, label in ((32 << 10, "32K", "2^15"), (1 << 20, "1M", "2^20"), (1 << 30, "1G", "2^30"),
                               (1 << 40, "1024G", "2^40"), (48 << 10, "48K", "49152"), (1000, "1000", "1000"),
                               (0, "0", "0"), (1536 << 20, "1536M", "1610612736")):
            with self.subTest(n=n):
                self.assertEqual(contract.format_size(n), text)
                self.assertEqual(contract.size_label(n), label)
        for text, n in (("4096", 4096), ("32K", 32 << 10), ("1MiB", 1 << 20), ("2g", 2 << 30), ("2^20", 1 << 20),
                        ("1B", 1)):
            self.assertEqual(contract.parse_size(text), n)
        for bad in ("", "0", "3^4", "2^41", "1X", "K", "2T", "1025G"):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                contract.parse_size(bad)
        self.assertEqual(contract.pow2_range(3, 20), [4, 8, 16])

    def test_summarize_is_stats_cpps(self):
        self.assertEqual(contract.summarize([])["n"], 0)
        one = contract.summarize([2.0])
        self.assertEqual((one["median"], one["stddev"], one["cv"]), (2.0, 0.0, 0.0))
        s = contract.summarize([3.0, 1.0, 2.0, 10.0])
        self.assertEqual((s["min"], s["median"], s["mean"], s["max"]), (1.0, 2.5, 4.0, 10.0))
        self.assertAlmostEqual(s["stddev"], (((9 + 4 + 1 + 36) / 3) ** 0.5))
        # The mean of equal values stays within them (rounding would put it one ulp outside).
        x = 0.1 + 0.2
        e = contract.summarize([x] * 7)
        self.assertEqual((e["mean"], e["stddev"], e["cv"]), (x, 0.0, 0.0))
        self.assertEqual(contract.summarize([0.0, 0.0])["cv"], 0.0)

    def test_stopping_rule(self):
        rule = contract.StoppingRule(3, 5, 1.0, 0.02)
        self.assertFalse(rule.done([1.0, 1.0], 0.0))           # fewer than min passes
        self.assertTrue(rule.done([1.0, 1.0, 1.0], 0.0))       # quiet enough
        self.assertFalse(rule.done([1.0, 2.0, 1.0], 0.5))      # noisy, time left
        self.assertTrue(rule.done([1.0, 2.0, 1.0], 1.0))       # time spent
        self.assertTrue(rule.done([1.0, 2.0, 1.0, 2.0, 1.0], 0.0))  # max passes
        self.assertEqual(contract.StoppingRule(7, 3).max_passes, 7)
        times = iter([0.1, 0.2, 0.1, 0.2, 0.1, 0.2])
        p = contract.StoppingRule(2, 4, 100.0, 0.0).measure(lambda: next(times), warmup=1)
        self.assertEqual((p.cold, p.warmup_passes, p.times), (0.1, 0, [0.2, 0.1, 0.2, 0.1]))
        trials = [{"kernel_s": 0.0, "h2d_s": 0.3, "d2h_s": 0.1, "total_s": 0.4}]
        self.assertEqual(contract.trial_measured(trials[0]), 0.4)

    def test_passes_are_session_cpps(self):
        """session.cpp take_passes: with --warmup N >= 1 the cold pass (flushed first under
        --flush-caches), N - 1 untimed warm-ups, then each timed pass after a flush; the cold pass is
        no trial and does not count towards max_time. A peer's cold pass apart (on a fresh
        connection) warms nothing of the timed passes' state: N warm-ups follow it. With --warmup 0
        no cold pass."""
        log: list[str] = []

        def one():
            log.append("pass")
            return 1.0
        rule = contract.StoppingRule(2, 2, 1.5, 0.0)  # max_time 1.5 s: a counted cold pass would stop at 1
        p = rule.measure(one, 3, before_pass=lambda: log.append("flush"))
        self.assertEqual(log, ["flush", "pass", "pass", "pass", "flush", "pass", "flush", "pass"])
        self.assertEqual((p.cold, p.warmup_passes, p.times, p.timed_as), (1.0, 2, [1.0, 1.0], "hot"))
        log.clear()
        p = rule.measure(one, 3, cold_pass=lambda: log.append("cold") or 5.0,
                         before_pass=lambda: log.append("flush"))
        self.assertEqual(log, ["flush", "cold", "pass", "pass", "pass", "flush", "pass", "flush", "pass"])
        self.assertEqual((p.cold, p.warmup_passes, p.times), (5.0, 3, [1.0, 1.0]))
        log.clear()
        p = rule.measure(one, 0, cold_pass=lambda: log.append("cold") or 5.0)
        self.assertEqual((log, p.cold, p.warmup_passes), (["pass", "pass"], None, 0))
        self.assertEqual(p.protocol(), {"cold": None, "cold_note": contract.NO_COLD_NOTE, "warmup_passes": 0,
                                        "timed_as": "hot"})
        warm = contract.Passes([1.0], 0.5, 1, "on a fresh connection", "host LLC 32M: wrote and read a 64M buffer")
        self.assertEqual(warm.protocol("query"), {
            "cold": {"h2d_s": 0.0, "kernel_s": 0.5, "d2h_s": 0.0, "total_s": 0.5, "phases_s": {"query": 0.5}},
            "cold_note": "on a fresh connection", "warmup_passes": 1, "timed_as": "warm",
            "flush": "host LLC 32M: wrote and read a 64M buffer"})

    def test_caches_are_caches_cpps(self):
        with tempfile.TemporaryDirectory() as root:
            self.assertEqual(contract.last_level_cache_bytes(root), 0)
            for i, size in enumerate(("32K", "32K", "512K", "32768K\n")):
                d = Path(root, "cpu0", "cache", f"index{i}")
                d.mkdir(parents=True)
                Path(d, "size").write_text(size)
            self.assertEqual(contract.last_level_cache_bytes(root), 32 << 20)
        self.assertEqual(contract.flush_description(32 << 20), "host LLC 32M: wrote and read a 64M buffer")
        self.assertEqual(contract.flush_description(0),
                         "host LLC of unknown size (sysfs has none): wrote and read a 1G buffer")

    def test_throughput_is_result_cpps(self):
        trials = [{"h2d_s": 0.5, "kernel_s": 1.0, "d2h_s": 0.5, "total_s": 2.0, "phases_s": {}}]
        t = contract.throughput(trials, 4e9, 1000, 8e9, 2e9, 16.0)
        self.assertEqual(t, {"kernel_gbps": 4.0, "total_gbps": 2.0, "transfer_gbps": 2.0, "elements_per_s": 1000.0,
                             "moved_gbps": 8.0, "pct_of_peak": 50.0, "parity": 1.0})
        zero = contract.throughput([{"h2d_s": 0.0, "kernel_s": 0.0, "d2h_s": 0.0, "total_s": 0.0}], 1, 1, 1, 1, 1.0)
        self.assertEqual(set(zero.values()), {0.0})
        self.assertEqual(contract.throughput(trials, 4e9, 1000, 8e9, 2e9, 0.0)["pct_of_peak"], 0.0)

    def test_the_ceiling_is_ceiling_cpps(self):
        """harness/ceiling.cpp (issue 51): the median of the samples ((a + b) / 2 of an even count),
        the spread (max - min) / median (0 with one sample), the sample nearest to a time (the
        earlier of two as near; 0 without samples)."""
        samples = [{"at_s": 0.2, "gbps": 27.9}, {"at_s": 10.4, "gbps": 26.1}, {"at_s": 20.9, "gbps": 21.0},
                   {"at_s": 31.0, "gbps": 25.0}]
        self.assertEqual(contract.ceiling_median(samples), (25.0 + 26.1) / 2)
        self.assertEqual(contract.ceiling_median(samples[:3]), 26.1)
        self.assertEqual(contract.ceiling_median([]), 0.0)
        self.assertEqual(contract.ceiling_spread(samples), (27.9 - 21.0) / ((25.0 + 26.1) / 2))
        self.assertEqual(contract.ceiling_spread(samples[:1]), 0.0)
        self.assertEqual(contract.ceiling_spread([]), 0.0)
        self.assertEqual(contract.nearest_ceiling(samples, 0.0), 27.9)
        self.assertEqual(contract.nearest_ceiling(samples, 16.0), 21.0)
        self.assertEqual(contract.nearest_ceiling(samples, 99.0), 25.0)
        self.assertEqual(contract.nearest_ceiling([{"at_s": 0.0, "gbps": 20.0}, {"at_s": 10.0, "gbps": 30.0}], 5.0),
                         20.0)  # as near to both: the earlier
        self.assertEqual(contract.nearest_ceiling([], 5.0), 0.0)

    def test_a_result_is_made_against_its_own_ceiling(self):
        """A result that records throughput.ceiling_gbps (issue 51) has its pct_of_peak made against
        that ceiling and carries it, as result.cpp writes it (0 without kernel time); one without it
        (an older executable's, a peer's) against the document's, and carries none."""
        trials = [{"h2d_s": 0.0, "kernel_s": 1.0, "d2h_s": 0.0, "total_s": 1.0, "phases_s": {}}]
        r = {"trials": trials, "phases": [], "elements": 1000, "bytes": {"input": 4e9, "min_moved": 8e9, "transfer": 0}}
        old = contract.result_figures(r, 16.0)["throughput"]
        self.assertNotIn("ceiling_gbps", old)
        self.assertEqual(old["pct_of_peak"], 50.0)
        self.assertEqual(contract.result_ceiling(r, 16.0), 16.0)
        own = dict(r, throughput={"ceiling_gbps": 20.0})
        self.assertEqual(contract.result_ceiling(own, 16.0), 20.0)
        tp = contract.result_figures(own, 16.0)["throughput"]
        self.assertEqual((tp["pct_of_peak"], tp["ceiling_gbps"]), (40.0, 20.0))
        copy = dict(own, trials=[dict(trials[0], kernel_s=0.0, h2d_s=1.0)], throughput={"ceiling_gbps": 0.0})
        self.assertEqual(contract.throughput(copy["trials"], 1, 1, 0, 1, 20.0, with_ceiling=True)["ceiling_gbps"], 0.0)
        self.assertEqual(contract.result_figures(copy, 16.0)["throughput"]["ceiling_gbps"], 0.0)

    def test_a_case_is_divided_by_the_ceiling_of_its_access_mix(self):
        """harness/patterns.cpp match_ceiling (issue 46), the cases of tests/harness/test_patterns.cpp:
        one pattern's mix gets its rate; between two, the time per byte interpolated by the read
        share; random reads at the gather rate per access, added in time; what cannot be matched is
        judged against the copy and says so."""
        r = {"read": 40.0, "write": 20.0, "copy": 25.0, "add": 30.0, "triad": 28.0, "gather4": 1.0, "gather32": 4.0}

        def mix(read, written, random_read=0, item=4):
            return {"read": read, "written": written, "random_read": random_read, "random_item": item}
        m = contract.match_ceiling
        self.assertEqual(m(mix(100, 0), r), (40.0, "read"))
        self.assertEqual(m(mix(0, 100), r), (20.0, "write"))
        self.assertEqual(m(mix(100, 100), r), (25.0, "copy"))
        self.assertEqual(m(mix(200, 100), r), (30.0, "add"))  # the better of add and triad
        self.assertEqual(m(mix(200, 100), dict(r, triad=35.0))[1], "triad")
        gbps, name = m(mix(500, 100), r)
        self.assertAlmostEqual(gbps, 1 / ((1.0 / 30 + 1.0 / 40) / 2), places=9)
        self.assertEqual(name, "add..read (83% read)")
        gbps, name = m(mix(60, 40), r)
        self.assertTrue(25 < gbps < 30)
        self.assertEqual(name, "copy..add (60% read)")
        gbps, name = m(mix(999, 1), r)  # a share that rounds to a pattern's is named after it
        self.assertTrue(30 < gbps < 40)
        self.assertEqual(name, "read")
        self.assertEqual(m(mix(400, 0, 400, 4), r)[1], "gather4")
        self.assertAlmostEqual(m(mix(400, 0, 400, 4), r)[0], 1.0, places=12)
        self.assertAlmostEqual(m(mix(320, 0, 320, 32), r)[0], 4.0, places=12)
        gbps, name = m(mix(180, 0, 180, 18), r)
        self.assertAlmostEqual(gbps, 180.0 / (10 * 6.0), places=12)
        self.assertEqual(name, "gather4..gather32")
        gbps, name = m(mix(800, 0, 400, 4), r)
        self.assertAlmostEqual(gbps, 800.0 / 410, places=9)
        self.assertEqual(name, "read + gather4")
        self.assertEqual(m({}, r), (25.0, "copy (reads and writes undeclared)"))
        self.assertEqual(m(mix(100, 0), {"copy": 25.0}), (25.0, "copy (only copy measured)"))
        self.assertEqual(m(mix(100, 0), {})[0], 0.0)
        seq = dict(r, gather4=0.0, gather32=0.0)
        self.assertEqual(m(mix(100, 0, 100, 4), seq), (40.0, "read (random reads as sequential: no gather measured)"))
        self.assertEqual(m(mix(20, 80), dict(r, write=0.0)), (25.0, "copy (20% read)"))
        # A case's rates are the patterns scaled by the copy sample nearest to it over patterns.copy.
        ceiling = {"samples": [{"at_s": 0.0, "gbps": 25.0}, {"at_s": 10.0, "gbps": 50.0}], "patterns": r}
        self.assertEqual(contract.case_ceiling(ceiling, {"timed_at_s": 11.0, "bytes": mix(100, 0)}), (80.0, "read"))
        self.assertEqual(contract.case_ceiling(ceiling, {"timed_at_s": 1.0, "bytes": mix(100, 0)}), (40.0, "read"))
        self.assertEqual(contract.case_ceiling({"samples": []}, {"timed_at_s": 1.0, "bytes": mix(100, 0)}), (0.0, ""))
        # Which names are the ceiling of the case's own mix (plausibility holds those to it).
        for label, matched in (("read", True), ("copy..read (75% read)", True), ("read + gather4", True),
                               ("copy..add (70% read) + gather4..gather32", True), ("gather4", True),
                               ("copy (reads and writes undeclared)", False), ("copy (only copy measured)", False),
                               ("copy (20% read)", False), ("add (100% read)", False), ("", False), (None, False),
                               ("read (random reads as sequential: no gather measured)", False)):
            self.assertEqual(contract.pattern_matched(label), matched, label)

    def test_the_csv_carries_the_results_ceiling(self):
        """result.cpp csv_row: ceiling_gbps right after pct_of_peak, empty where the result has none."""
        columns = CSV_COLUMNS
        self.assertEqual(columns[columns.index("pct_of_peak") + 1], "ceiling_gbps")
        doc = {"benchmark": "ra", "backend": "cpu", "context": {"device": {"name": "cpu0"}}, "results": [
            {"id": "a/b", "test": "a", "variant": "b", "params": {}, "throughput": {"pct_of_peak": 40.0,
                                                                                   "ceiling_gbps": 20.5}},
            {"id": "a/c", "test": "a", "variant": "c", "params": {}, "throughput": {"pct_of_peak": 40.0}},
            {"id": "a/d", "test": "a", "variant": "d", "params": {}, "status": "skipped"}]}
        rows = list(csv.DictReader(io.StringIO(contract.csv_text(doc, columns))))
        self.assertEqual([r["ceiling_gbps"] for r in rows], ["20.5", "", ""])
        # Issue 46: its name right after it, empty where the result has none.
        self.assertEqual(columns[columns.index("ceiling_gbps") + 1], "ceiling_pattern")
        doc["results"][0]["throughput"]["ceiling_pattern"] = "copy..read (75% read)"
        rows = list(csv.DictReader(io.StringIO(contract.csv_text(doc, columns))))
        self.assertEqual([r["ceiling_pattern"] for r in rows], ["copy..read (75% read)", "", ""])

    def test_figures_that_do_not_apply_are_empty_cells(self):
        """result.cpp kNotApplicableWhenZero: 0 in the document, an empty cell in the CSV."""
        r = {"id": "a/b", "test": "a", "variant": "b", "params": {}, "status": "ok",
             "stats": {"kernel_s": {"median": 0.002, "cv": 0.0}, "h2d_s": {"median": 0.0}, "d2h_s": {"median": 0.0},
                       "total_s": {"median": 0.002, "cv": 0.0}},
             "throughput": {"kernel_gbps": 1.5, "transfer_gbps": 0.0, "pct_of_peak": 0.0, "parity": 0.0,
                            "ceiling_gbps": 0.0}}
        doc = {"benchmark": "ra", "backend": "cpu", "results": [r]}
        row = next(csv.DictReader(io.StringIO(contract.csv_text(doc, CSV_COLUMNS))))
        for k in ("h2d_median_s", "d2h_median_s", "transfer_gbps", "pct_of_peak", "parity", "ceiling_gbps"):
            self.assertEqual(row[k], "", k)
        self.assertEqual((row["kernel_median_s"], row["kernel_gbps"], row["kernel_cv"]), ("0.002", "1.5", "0"))

    def test_exit_codes_and_schema(self):
        self.assertEqual((contract.EXIT_OK, contract.EXIT_FAILED, contract.EXIT_USAGE, contract.EXIT_SKIP),
                         (0, 1, 2, 77))
        self.assertEqual(contract.SCHEMA, "hetdb-bench/2")


if __name__ == "__main__":
    unittest.main()
