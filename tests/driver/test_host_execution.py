"""Host execution of the CUDA backend (cuda-host: the CUDA sources run on the CPU, a correctness check):
a known backend of the driver with a [backend.cuda-host] table of its own; kept out of everything
about real processors (headline, speed-ups, figures, ceilings, key widths, compare, targets,
scaling, gpu-summary); shown in a report section of its own, where a failed case still fails the run.
Every document here is synthetic (make_fixture): no cuda-host executable is needed."""
import csv
import json
import shutil
import subprocess
import sys
import unittest
from pathlib import Path

from helpers import REPO, SCRIPTS, TempDirCase, script

from hdb import compare, config, headline, key_width, plots, report, results, scaling, targets
from hdb.runner import plan
from hdb.util import UsageError

import check_results
import make_fixture
from make_fixture import document, record

HOST = "cuda-host"
K, M = 1 << 10, 1 << 20
SEL = {"dist": "uniform", "selectivity": 0.5}
# The fixture's sizes: a cuda-host result at these sizes would sit beside the cpu and cuda ones.
SIZES = make_fixture.SIZES


def host_ra(key_widths=False):
    """ra on cuda-host: absurdly fast (2 ns: a time below the timer's 1 ns is no measurement, and is left
    out, results.MIN_TIME_S) so that, were it read as a processor, it would win every headline, speed-up
    and comparison; one failed and one skipped case."""
    recs = []
    for s in SIZES:
        for key in ((32, 64) if key_widths else (None,)):
            params = dict(SEL, **({"key": key} if key else {}))
            recs.append(record("select", "tuned", s, 2e-9, 2e-9, params=params, transfer="pinned", ceiling=3000.0))
    recs.append(record("join", "tuned", SIZES[0], 0, params={"dist": "uniform", "match": 1, "fanout": 1},
                       transfer="pinned", status="failed", reason="verification failed: row 7 differs (host fixture)"))
    recs.append(record("join", "cub", SIZES[0], 0, params={"dist": "uniform", "match": 1, "fanout": 1},
                       transfer="pinned", status="skipped", reason="not supported on host execution (host fixture)"))
    return document("ra", HOST, recs, 6.0)


def host_bus():
    """bus on cuda-host: copies at 1000 TB/s, which no ceiling may quote."""
    recs = [make_fixture.bus_copy(t, s, 1e-12 * s, "pinned") for t in ("h2d", "d2h") for s in SIZES]
    recs += [record("device_copy", "kernel", s, 1e-12 * s, ceiling=3000.0) for s in SIZES]
    return document("bus", HOST, recs, 6.0)


def add_host_docs(run, docs=None):
    """raw/<name>.json and .csv of cuda-host documents in a run directory, and their run.json entries
    (ra-cuda-host failed: exit 1 with a failed case, as the harness ends it)."""
    docs = docs or {"bus-cuda-host": host_bus(), "ra-cuda-host": host_ra()}
    for name, d in docs.items():
        make_fixture.write_raw(str(Path(run, "raw")), name, d)
    path = Path(run, "run.json")
    with path.open() as f:
        m = json.load(f)
    for name, d in docs.items():
        failed = d["summary"]["failed"]
        m["entries"].append({"name": name, "benchmark": d["benchmark"], "backend": HOST,
                             "executable": f"hdb-{name}", "args": ["--sizes", "32K"], "timeout_s": 1800.0,
                             "status": "failed" if failed else "ok", "exit_code": 1 if failed else 0,
                             "duration_s": 1.0, "reason": f"exit 1: {failed} failed cases" if failed else "",
                             "cases": d["summary"]})
    with path.open("w") as f:
        json.dump(m, f)
    return run


def sections(md):
    """'## title' -> its text, in the report's Markdown."""
    out, title = {}, None
    for line in md.splitlines():
        if line.startswith("## "):
            title = line[3:]
            out[title] = []
        elif title:
            out[title].append(line)
    return {t: "\n".join(lines) for t, lines in out.items()}


class HostConfig(unittest.TestCase):
    def load(self, name):
        return config.load(config.resolve_config_path(REPO, name))

    def test_a_known_backend_but_not_a_default_one(self):
        self.assertIn(HOST, config.BACKENDS)
        cfg = config.validate({"backends": ["cpu", HOST]})
        self.assertEqual(cfg["backends"], ["cpu", HOST])
        self.assertNotIn(HOST, config.validate({})["backends"])  # without `backends`: the real processors
        cfg = config.apply_overrides(config.validate({}), backends=[HOST])
        self.assertEqual(cfg["backends"], [HOST])
        self.assertEqual(config.validate({"bench": {"ra": {"backends": [HOST]}}})["bench"]["ra"]["backends"], [HOST])
        self.assertEqual(config.split_executable("hdb-ra-cuda-host"), ("ra", HOST))
        self.assertEqual(config.split_executable("hdb-ra-cuda"), ("ra", "cuda"))
        self.assertEqual(config.split_executable("hdb-ra-gpu"), ("", ""))

    def test_quick_runs_cuda_host_at_its_smallest_size_once(self):
        cfg = self.load("quick")
        self.assertIn(HOST, cfg["backends"])
        entries = {e["name"]: e for e in plan(cfg)}
        for bench in cfg["benchmarks"]:
            host, cuda = entries[f"{bench}-{HOST}"], entries[f"{bench}-cuda"]
            self.assertEqual(host["executable"], f"hdb-{bench}-cuda-host")
            a = host["args"]
            unsized = bench in config.SCALE_FACTOR_BENCHMARKS  # ssb: no size option at all (it refuses them)
            for opt, value in (("--sizes", "32K"), ("--passes", "1"), ("--max-passes", "1"), ("--warmup", "0")):
                self.assertEqual(a.count(opt), 0 if unsized and opt == "--sizes" else 1, (bench, a))  # never twice
                if a.count(opt):
                    self.assertEqual(a[a.index(opt) + 1], value, (bench, a))
            self.assertGreater(host["timeout_s"], cuda["timeout_s"])
            c = cuda["args"]
            if unsized:
                self.assertNotIn("--sizes", c)
                continue
            self.assertEqual(c[c.index("--sizes") + 1], "32K,1M")  # the other backends keep the harness's
        ra = entries[f"ra-{HOST}"]["args"]
        self.assertEqual(ra[ra.index("--key-bits") + 1], "32,64")  # the benchmark's own args still apply

    def test_backend_tables_combine_with_bench_tables_and_the_command_line(self):
        doc = {"backends": ["cpu", HOST], "benchmarks": ["bus", "ra"], "timeout_s": 100,
               "harness": {"min_size": "32K", "max_size": "1M", "passes": 3},
               "bench": {"ra": {"args": ["--key-bits", "32,64"], "timeout_s": 3000,
                                "large": {"sizes": "256M", "only": ["select/*"]}}},
               "backend": {HOST: {"sizes": "32K", "passes": 1, "args": ["--key-bits", "32"], "timeout_s": 900}}}
        cfg = config.validate(doc, "t.toml")
        e = {x["name"]: x for x in plan(cfg)}
        a = e["ra-cuda-host"]["args"]
        self.assertEqual(a[a.index("--sizes") + 1], "32K")
        self.assertNotIn("--min-size", a)  # a table that sets a size key replaces the whole size setting
        self.assertEqual(a[a.index("--passes") + 1], "1")
        self.assertEqual(a.count("--key-bits"), 1)
        self.assertEqual(a[a.index("--key-bits") + 1], "32")  # backend args replace the same option
        self.assertEqual(e["ra-cpu"]["args"][e["ra-cpu"]["args"].index("--key-bits") + 1], "32,64")
        self.assertEqual(e["bus-cuda-host"]["timeout_s"], 900)  # raises the limit...
        self.assertEqual(e["ra-cuda-host"]["timeout_s"], 3000)  # ...never lowers it
        big = e["ra-cuda-host-large"]["args"]
        self.assertEqual(big[big.index("--sizes") + 1], "256M")  # a large run keeps the large table's sizes
        self.assertEqual(big[big.index("--passes") + 1], "1")
        doc["backend"][HOST]["large"] = False
        names = [x["name"] for x in plan(config.validate(doc, "t.toml"))]
        self.assertIn("ra-cpu-large", names)
        self.assertNotIn("ra-cuda-host-large", names)
        # The command line wins over backend tables too.
        cfg = config.apply_overrides(cfg, sizes="1M", passes=2, timeout=5)
        e = {x["name"]: x for x in plan(cfg)}
        a = e["ra-cuda-host"]["args"]
        self.assertEqual((a[a.index("--sizes") + 1], a[a.index("--passes") + 1]), ("1M", "2"))
        self.assertEqual(e["ra-cuda-host"]["timeout_s"], 5)

    def test_bad_backend_tables_name_the_problem(self):
        for doc, text in (({"backend": {"cuda-hots": {"sizes": "32K"}}}, "no backend named 'cuda-hots'"),
                          ({"backend": {HOST: {"size": "32K"}}}, "unknown key 'size'"),
                          ({"backend": {HOST: {"large": "no"}}}, "'large' must be true or false"),
                          ({"backend": {HOST: {"timeout_s": 0}}}, "timeout_s"),
                          ({"backend": {HOST: {"args": "--x"}}}, "'args'"),
                          ({"backend": {HOST: 3}}, "must be a table"),
                          ({"backends": ["cuda_host"]}, "unknown backends cuda_host")):
            with self.assertRaises(UsageError) as ctx:
                config.validate(doc, "t.toml")
            self.assertIn(text, str(ctx.exception))

    def test_raw_file_names_with_a_dash_in_the_backend(self):
        raw = Path(self.tmp_dir(), "raw")
        raw.mkdir(parents=True)
        names = ["ra-cuda-host.json", "ra-cuda-host-large.json", "merge-cuda-host.json.rank1", "ra-cpu.json"]
        for n in names:
            (raw / n).touch()
        found = sorted(Path(p).name for p in results.raw_files(str(raw.parent)))
        self.assertEqual(found, sorted(names))
        self.assertEqual(Path(results.csv_path_for(str(raw / "ra-cuda-host-large.json"))).name,
                         "ra-cuda-host-large.csv")

    def tmp_dir(self):
        import tempfile
        d = tempfile.mkdtemp(prefix="hdb-host-test-")
        self.addCleanup(shutil.rmtree, d, True)
        return d


CONFIG = """
description = "host execution test"
benchmarks = ["bus", "ra"]
backends = ["cpu", "cuda-host"]
timeout_s = 60
[harness]
sizes = "32K,1M"
passes = 2
[backend.cuda-host]
sizes = "32K"
passes = 1
max_passes = 1
timeout_s = 120
"""


class HostRunAll(TempDirCase):
    """scripts/run-all with fake executables named hdb-<bench>-cuda-host."""

    def run_all(self, modes, *args, config_text=CONFIG):
        build = self.make_fakes(modes)
        cfg = str(Path(self.tmp, "host.toml"))
        with Path(cfg).open("w") as f:
            f.write(config_text)
        self.log = str(Path(self.tmp, "calls.jsonl"))
        self.out = str(Path(self.tmp, "results"))
        return script("run-all", "--config", cfg, "--build-dir", build, "--out", self.out, "--no-setup",
                      "--no-build", *args, env={"FAKE_LOG": self.log, "HDB_NO_MATPLOTLIB": "1"})

    def calls(self):
        with Path(self.log).open() as f:
            return {c["name"]: c for c in map(json.loads, f)}

    def run_dir(self):
        [run] = Path(self.out).iterdir()
        return str(run)

    def test_a_failed_host_case_fails_the_run_and_is_reported(self):
        p = self.run_all({"bus-cpu": "ok", "ra-cpu": "ok", "bus-cuda-host": "ok", "ra-cuda-host": "fail"})
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        run = self.run_dir()
        with Path(run, "run.json").open() as f:
            entries = {e["name"]: e for e in json.load(f)["entries"]}
        self.assertEqual(entries["ra-cuda-host"]["status"], "failed")
        self.assertEqual(entries["ra-cuda-host"]["backend"], HOST)
        self.assertEqual(entries["bus-cuda-host"]["status"], "ok")
        args = self.calls()["hdb-ra-cuda-host"]["args"]
        self.assertEqual(args[args.index("--sizes") + 1], "32K")
        self.assertEqual(args[args.index("--max-passes") + 1], "1")
        self.assertTrue(args[args.index("--json") + 1].endswith("raw/ra-cuda-host.json"))
        cpu = self.calls()["hdb-ra-cpu"]["args"]
        self.assertEqual(cpu[cpu.index("--sizes") + 1], "32K,1M")
        with Path(run, "report.md").open() as f:
            md = f.read()
        sec = sections(md)
        self.assertIn(report.HOST_SECTION, sec)
        self.assertIn("copy/parallel@32K", sec[report.HOST_SECTION])
        self.assertIn("verification failed", sec[report.HOST_SECTION])
        self.assertIn("host execution (cuda-host): 1 failed", sec["Skipped and failed cases"])
        with Path(run, "summary.csv").open() as f:  # the raw CSV, end to end, keeps them
            self.assertIn(HOST, {r["backend"] for r in csv.DictReader(f)})

    def test_backends_cuda_host_selects_only_it(self):
        modes = {"bus-cpu": "ok", "ra-cpu": "ok", "bus-cuda-host": "ok", "ra-cuda-host": "ok"}
        p = self.run_all(modes, "--backends", HOST)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(sorted(self.calls()), ["hdb-bus-cuda-host", "hdb-ra-cuda-host"])
        with Path(self.run_dir(), "report.md").open() as f:
            sec = sections(f.read())
        self.assertIn(report.HOST_SECTION, sec)
        self.assertFalse([t for t in sec if t.startswith("Headline") or t.startswith("Benchmark")], list(sec))

    def test_selections_that_name_nothing_or_a_wrong_table(self):
        modes = {"bus-cpu": "ok", "bus-cuda-host": "ok"}
        p = self.run_all(modes, "--backends", ",")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--backends names nothing", p.stderr)
        self.assertIn(HOST, p.stderr)  # the valid names
        p = self.run_all(modes, "--backends", "cuda-hots")
        self.assertEqual(p.returncode, 2, p.stderr)
        p = self.run_all(modes, config_text=CONFIG.replace("[backend.cuda-host]", "[backend.cuda_host]"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("no backend named 'cuda_host'", p.stderr)
        p = self.run_all(modes, config_text=CONFIG + '[bench.rra]\nargs = ["--x"]\n')
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("[bench.rra]: no benchmark named rra", p.stderr)
        self.assertNotIn("Traceback", p.stderr)


class HostReport(TempDirCase):
    """The report on the committed fixture plus cuda-host documents."""

    def setUp(self):
        super().setUp()
        self.run = add_host_docs(self.copy_fixture())
        self.docs = results.load_docs(self.run)
        self.rows = results.all_rows(self.docs)

    def test_rows_know_host_execution(self):
        host = [r for r in self.rows if results.host_execution(r)]
        self.assertTrue(host)
        self.assertEqual({r["backend"] for r in host}, {HOST})
        self.assertFalse([r for r in results.processor_rows(self.rows) if r["backend"] == HOST])
        # A document of another backend name that says device.kind cuda-host is host execution too.
        d = document("ra", "cuda", [record("select", "tuned", 32 * K, 2e-9, params=SEL)], 6.0)
        d["context"]["device"]["kind"] = HOST
        self.assertTrue(all(r["host_execution"] for r in results.rows_of(d)))

    def test_headline_never_takes_host_execution(self):
        ls = headline.lines(self.rows)
        self.assertTrue(ls)
        for ln in ls:
            self.assertNotIn(HOST, ln.per_backend, ln.name)
            self.assertNotIn(HOST, ln.all_rows, ln.name)
            self.assertNotEqual(ln.acc, HOST)
        self.assertNotIn(HOST, headline.processors(self.docs))
        header, table = headline.table(ls, headline.processors(self.docs))
        self.assertNotIn(HOST, json.dumps(table))

    def test_without_a_gpu_host_execution_is_no_accelerator(self):
        cpu = document("ra", "cpu", [record("select", "parallel", s, s / M * 1e-3, params=SEL) for s in SIZES], 20.0)
        docs = [cpu, host_ra()]
        [ln] = headline.lines(results.all_rows(docs))
        self.assertEqual(list(ln.per_backend), ["cpu"])
        self.assertIsNone(ln.acc)
        self.assertIsNone(ln.acc_speedup("kernel_median_s"))
        self.assertIn("No device backend ran here", " ".join(headline.summary([ln], headline.processors(docs), docs)))

    def test_figures_speedups_and_key_widths_never_see_host_execution(self):
        seen = []

        def recorder(name):
            def f(rows, *a, **kw):
                seen.append((name, list(rows)))
                return None
            return f
        names = ("throughput", "pct_of_peak", "breakdown", "speedup", "merge_cycles", "merge_gpu_speedup",
                 "ngram_errors", "tpch_kernels")
        saved = {n: getattr(plots, n) for n in names + ("available", "headline", "key_widths")}
        self.addCleanup(lambda: [setattr(plots, n, f) for n, f in saved.items()])
        for n in names:
            setattr(plots, n, recorder(n))
        plots.available = lambda: True
        drawn = []
        plots.headline = lambda ls, *a, **kw: drawn.append(("headline", ls))
        plots.key_widths = lambda ps, *a, **kw: drawn.append(("key-width", ps))
        # ra on cuda-host at both key widths: would make key-width pairs if it were read
        add_host_docs(self.run, {"ra-cuda-host": host_ra(key_widths=True)})
        cpu_keys = document("ra", "cpu", [record("select", "parallel", s, s / M * 1e-3, params=dict(SEL, key=k))
                                          for s in SIZES for k in (32, 64)], 20.0)
        make_fixture.write_raw(str(Path(self.run, "raw")), "ra-cpu", cpu_keys)
        rows = results.all_rows(results.load_docs(self.run))
        self.assertTrue(key_width.pairs([r for r in rows if r["backend"] == "cpu"]))
        self.assertFalse([p for p in key_width.pairs(rows) if p[0]["backend"] == HOST])
        report.build(self.run)
        self.assertEqual({n for n, _ in seen}, set(names))
        for name, rs in seen:
            self.assertFalse([r for r in rs if results.host_execution(r)], name)
        drawn = dict(drawn)
        self.assertEqual(set(drawn), {"headline", "key-width"})
        for ln in drawn["headline"]:
            self.assertNotIn(HOST, ln.all_rows, ln.name)
        self.assertTrue(drawn["key-width"])
        self.assertFalse([p for p in drawn["key-width"] if results.host_execution(p[0])])
        self.assertNotIn(HOST, results.machine_line(results.load_docs(self.run)))

    def test_the_report_has_a_section_of_its_own(self):
        p = script("report", self.run, env={"HDB_NO_MATPLOTLIB": "1"})
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with Path(self.run, "report.md").open() as f:
            md = f.read()
        sec = sections(md)
        host = sec[report.HOST_SECTION]
        self.assertIn("select/tuned[dist=uniform,selectivity=0.5,transfer=pinned]@32M", host)
        self.assertIn("| ra-cuda-host | join/tuned[dist=uniform,match=1,fanout=1,transfer=pinned]@32K | failed | no | "
                      "verification failed: row 7 differs (host fixture) |", host)
        self.assertIn("| ra-cuda-host | join/cub[dist=uniform,match=1,fanout=1,transfer=pinned]@32K | skipped | - |",
                      host)
        # cases, ok and verified, unchecked, failed, skipped
        self.assertIn("| ra-cuda-host | 5 | 3 | 0 | 1 | 1 |", host)
        self.assertNotIn("GB/s", host)  # no throughput: an emulation's times are no processor's
        self.assertNotIn(" ms", host)
        for title, text in sec.items():
            if title.startswith("Headline"):  # the machine's tables follow it without a heading of their own
                text = text.split("| host | CPU |")[0]
            if title.startswith(("Headline", "Ceilings", "Benchmark", "32- vs 64-bit", "MPI ranks")):
                self.assertNotIn(HOST, text, title)
        # Named where it is: the note on top, the devices (as no GPU), the executables' outcomes.
        self.assertIn("This run includes host execution of the CUDA backend", md)
        self.assertIn("| cuda-host | host execution, not a GPU (Hopper limits) | host execution on this CPU, not a GPU",
                      md)
        self.assertIn("| hdb-ra-cuda-host | failed |", md)
        self.assertIn("host execution (cuda-host): 1 failed, 1 skipped cases", sec["Skipped and failed cases"])
        self.assertFalse([ln for ln in sec["Skipped and failed cases"].splitlines() if ln.startswith("- ra-cuda-host")])
        with Path(self.run, "report.html").open() as f:
            self.assertIn(report.HOST_SECTION, f.read())


class HostCompare(TempDirCase):
    def test_compare_leaves_host_execution_out(self):
        a = add_host_docs(self.copy_fixture())
        b = str(Path(self.tmp, "run-b"))
        shutil.copytree(a, b)
        slow = host_ra()
        for r in slow["results"]:  # 1000x slower in B: were it compared, it would be flagged
            if r["status"] == "ok":
                for t in r["trials"]:
                    t["kernel_s"] *= 1000
                r["stats"]["kernel_s"] = make_fixture.stats([t["kernel_s"] for t in r["trials"]])
        make_fixture.write_raw(str(Path(b, "raw")), "ra-cuda-host", slow)
        out = str(Path(self.tmp, "cmp"))
        p = script("compare", a, b, "--out", out, env={"HDB_NO_MATPLOTLIB": "1"})
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("host execution (cuda-host) not compared: 14 results in A, 14 in B", p.stdout)
        with Path(out, "compare.csv").open() as f:
            rows = list(csv.DictReader(f))
        self.assertTrue(rows)
        self.assertFalse([r for r in rows if r["backend"] == HOST])
        self.assertTrue(all(r["verdict"] == "" for r in rows))
        with Path(out, "compare.md").open() as f:
            md = f.read()
        sec = sections(md)
        self.assertIn("- A: ra-cuda-host: 5 results", sec["Not compared: host execution"])
        self.assertIn("- B: bus-cuda-host: 9 results", sec["Not compared: host execution"])
        self.assertNotIn(HOST, md.split("## Not compared")[0])
        self.assertNotIn(HOST, sec.get("Unmatched results", ""))
        pairs, only_a, only_b = compare.match(results.all_rows(results.load_docs(a)),
                                              results.all_rows(results.load_docs(b)))
        self.assertFalse([p for p in pairs if p["key"][1] == HOST])


class HostTargetsAndScaling(TempDirCase):
    def write(self, folder, name, doc):
        raw = Path(self.tmp, folder, "raw")
        raw.mkdir(parents=True, exist_ok=True)
        make_fixture.write_raw(str(raw), name, doc)
        return str(raw.parent)

    def test_targets_judge_nothing_from_host_execution(self):
        big = 256 * M
        d = document("ra", HOST, [dict(record("select", "tuned", big, 1e-6, params=SEL, ceiling=3000.0))], 6.0)
        d["results"][0]["throughput"]["pct_of_peak"] = 99.0
        bus = host_bus()
        bus["context"]["device"]["pcie"] = {"theoretical_gbps_per_direction": 63.0}
        self.write("run", "ra-cuda-host", d)
        self.write("run", "bus-cuda-host", bus)
        rows, docs = targets.load_rows(str(Path(self.tmp, "run")))
        self.assertEqual((rows, docs), ([], []))
        # Even rows handed in directly judge nothing.
        every = results.rows_of(d) + results.rows_of(bus)
        for t in targets.evaluate(every, [d, bus]):
            self.assertIsNone(t["figure"], t["target"])
        self.assertEqual(targets.pcie_link_gbps([bus]), (None, {}))

    def test_scaling_matches_no_host_execution(self):
        runs = []
        for n in (1, 2):
            cpu = document("dist", "cpu", [record("unique", "parallel", 32 * M, 1.0 / n)], 20.0)
            host = document("dist", HOST, [record("unique", "tuned", 32 * M, 1.0 / n)], 6.0)
            run = self.write(f"np{n}", "dist-cpu", cpu)
            self.write(f"np{n}", "dist-cuda-host", host)
            runs.append((n, run))
        table = scaling.collect(runs)
        self.assertEqual([k[1] for k in table], ["cpu"])

    def test_gpu_summary_leaves_host_execution_out(self):
        folder = self.write("gpu", "ra-cuda-host", host_ra())
        self.write("gpu", "ra-cuda", document("ra", "cuda", [record("select", "tuned", 32 * M, 1e-3, params=SEL)],
                                              3000.0))
        p = subprocess.run(["sh", str(Path(SCRIPTS, "hdb", "python")), str(Path(SCRIPTS, "gpu-summary")),
                            folder], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)  # the host doc's failed case is not counted
        self.assertIn("1 result files of host execution", p.stdout)
        self.assertIn("hdb-ra-cuda on", p.stdout)
        self.assertNotIn("hdb-ra-cuda-host on", p.stdout)


class HostSchema(TempDirCase):
    def test_host_documents_are_valid_and_say_so_consistently(self):
        if check_results.jsonschema is None:
            self.skipTest("jsonschema is not available")
        d = document("ra", HOST, [record("select", "tuned", 32 * K, 1e-3, params=SEL, ceiling=6.0)], 6.0)
        problems, n_ok = check_results.check_doc(d)
        self.assertEqual((problems, n_ok), ([], 1))
        for backend, kind in ((HOST, "cuda"), ("cuda", HOST)):
            bad = json.loads(json.dumps(d))
            bad["backend"], bad["context"]["device"]["kind"] = backend, kind
            problems, _ = check_results.check_doc(bad)
            self.assertTrue([p for p in problems if "host execution says 'cuda-host'" in p], problems)
        bad = json.loads(json.dumps(d))
        bad["context"]["device"]["kind"] = "cuda_host"
        self.assertTrue(check_results.check_doc(bad)[0][0].startswith("does not match"))
        # A run directory with cuda-host files passes --all (a failed case is a problem, as for any backend).
        run = self.copy_fixture()
        make_fixture.write_raw(str(Path(run, "raw")), "ra-cuda-host", d)
        p = subprocess.run([sys.executable, str(Path(REPO, "tests", "check_results.py")), "--all", run],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("raw/ra-cuda-host.json: 1 verified results, schema ok", p.stdout)
        make_fixture.write_raw(str(Path(run, "raw")), "ra-cuda-host", host_ra())
        p = subprocess.run([sys.executable, str(Path(REPO, "tests", "check_results.py")), "--all", run],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("failed: verification failed: row 7 differs", p.stdout)


if __name__ == "__main__":
    unittest.main()
