"""Sizes beyond the caches ([beyond_caches], hdb/caches.py): the host's LLC from sysfs or lscpu, a
GPU's L2 from a probe of hdb-bus-<backend>, and the largest sizes of `default` raised to at least
2x the larger cache where memory and the time budget allow, the reason recorded where they do not."""
import io
import json
import subprocess
import sys
from pathlib import Path

from helpers import REPO, TempDirCase, script

from hdb import caches, config
from hdb.runner import Runner, plan
from hdb.util import UsageError

K, M, G = 1 << 10, 1 << 20, 1 << 30


def load(name):
    return config.load(config.resolve_config_path(REPO, name))


def machine(llc, memory=256 * G, devices=(), ranks_per_host=1):
    return caches.Machine({"bytes": llc, "source": "fixture"}, list(devices), memory, ranks_per_host)


def gpu(l2, memory=80 * G, backend="cuda"):
    return {"backend": backend, "device": "fixture GPU", "kind": backend, "type": "gpu", "l2_bytes": l2,
            "memory_bytes": memory, "source": "fixture"}


def arg(entry, flag):
    a = entry["args"]
    return a[a.index(flag) + 1] if flag in a else None


class HostCacheTest(TempDirCase):
    def sysfs(self, llc="32768K", groups=("0-1",)):
        """A /sys/devices/system/cpu of one L1d/L1i/L2 per CPU and an LLC shared by each group of CPUs."""
        root = Path(self.tmp, "cpu")
        for cpu in sorted(c for g in groups for c in caches._cpu_list(g)):
            group = next(g for g in groups if cpu in caches._cpu_list(g))
            for i, (level, size, kind, shared) in enumerate(((1, "32K", "Data", str(cpu)),
                                                              (1, "32K", "Instruction", str(cpu)),
                                                              (2, "512K", "Unified", str(cpu)),
                                                              (3, llc, "Unified", group))):
                d = root / f"cpu{cpu}" / "cache" / f"index{i}"
                d.mkdir(parents=True)
                for name, text in (("level", level), ("size", size), ("type", kind), ("shared_cpu_list", shared)):
                    (d / name).write_text(f"{text}\n")
        return root

    def test_sysfs_as_the_executables_read_it(self):
        llc = caches.host_llc(self.sysfs(), lscpu=lambda: self.fail("lscpu is the fallback only"))
        self.assertEqual((llc["bytes"], llc["per_instance"], llc["instances"], llc["level"]), (32 * M, 32 * M, 1, 3))
        self.assertIn("index3", llc["source"])

    def test_every_instance_counts(self):
        # two sockets (or CCXs) of 32 MB each: a parallel variant on every core has 64 MB of LLC
        llc = caches.sysfs_llc(self.sysfs("32768K", ("0-1", "2-3")))
        self.assertEqual((llc["bytes"], llc["per_instance"], llc["instances"]), (64 * M, 32 * M, 2))

    def test_lscpu_is_the_fallback(self):
        text = ("Architecture:            x86_64\n"
                "L1d cache:               64 KiB (2 instances)\n"
                "L1i cache:               64 KiB (2 instances)\n"
                "L2 cache:                1 MiB (2 instances)\n"
                "L3 cache:                480 MiB (1 instance)\n")
        llc = caches.host_llc(Path(self.tmp, "no-sysfs"), lscpu=lambda: text)
        self.assertEqual((llc["bytes"], llc["instances"], llc["level"]), (480 * M, 1, 3))
        self.assertIn("lscpu: L3 cache:", llc["source"])
        self.assertEqual(caches.parse_lscpu("L3 cache: 64 MiB (2 instances)\n")["per_instance"], 32 * M)
        self.assertEqual(caches.parse_lscpu("L2 cache:  1024K\nL3 cache:  32768K\n")["bytes"], 32 * M)  # old lscpu
        unknown = caches.host_llc(Path(self.tmp, "no-sysfs"), lscpu=lambda: "")
        self.assertEqual(unknown["bytes"], 0)
        self.assertIn("unknown", unknown["source"])

    def test_sizes_and_memory(self):
        for text, n in (("32768K", 32 * M), ("480 MiB", 480 * M), ("1.5 MiB", 3 * M // 2), ("32 MB", 32 * M),
                        ("512", 512), ("", 0), ("big", 0)):
            self.assertEqual(caches.parse_cache_size(text), n, text)
        meminfo = Path(self.tmp, "meminfo")
        meminfo.write_text("MemTotal:       24681868 kB\nMemFree:  100 kB\nMemAvailable:   20000000 kB\n")
        self.assertEqual(caches.available_memory(meminfo), 20000000 * 1024)
        self.assertEqual(caches.available_memory(Path(self.tmp, "none")), 0)


class ProbeTest(TempDirCase):
    """The device's L2 from a 32K probe of hdb-bus-<backend>: fake executables stand in."""

    def fake(self, name, body):
        d = Path(self.tmp, "bin")
        d.mkdir(exist_ok=True)
        p = d / name
        p.write_text(f"#!{sys.executable}\nimport json, sys, time\nargs = sys.argv[1:]\n"
                     "out = args[args.index('--json') + 1] if '--json' in args else None\n" + body)
        p.chmod(0o755)
        return p

    def writes(self, device):
        return f"json.dump({{'context': {{'device': {device!r}}}}}, open(out, 'w'))\n"

    def test_l2_and_memory_from_the_context(self):
        dev = {"kind": "cuda", "name": "NVIDIA H200", "l2_cache_bytes": 62914560, "global_memory_bytes": 150 * G}
        got = caches.probe_device(self.fake("hdb-bus-cuda", self.writes(dev)), [])
        self.assertEqual((got["device"], got["type"], got["l2_bytes"], got["memory_bytes"]),
                         ("NVIDIA H200", "gpu", 62914560, 150 * G))

    def test_what_it_runs(self):
        self.fake("hdb-bus-cuda", "open(out + '.args', 'w').write(' '.join(args))\n" +
                  self.writes({"kind": "cuda", "name": "x"}))
        calls = []

        def run(cmd, **kw):
            calls.append(cmd)
            p = subprocess.run(cmd, **kw)
            calls.append(Path(cmd[-1] + ".args").read_text())
            return p

        cfg = config.validate({"benchmarks": ["bus", "ra"], "backends": ["cpu", "cuda"], "harness": {"device": 1}})
        got = caches.device_caches(cfg, Path(self.tmp, "bin"), run=run)
        self.assertEqual([(d["backend"], d["l2_bytes"], d["memory_bytes"]) for d in got], [("cuda", None, None)])
        for flag in ("--only h2d/copy", "--sizes 32K", "--passes 1", "--device 1"):
            self.assertIn(flag, calls[1])
        # OpenCL: once per platform the configuration lists; cpu: no probe
        cfg = config.validate({"backends": ["cpu", "opencl"], "backend": {"opencl": {"platforms": ["pocl", "nvidia"]}}})
        got = caches.device_caches(cfg, Path(self.tmp, "bin"))
        self.assertEqual([(d["backend"], d["platform"]) for d in got], [("opencl", "pocl"), ("opencl", "nvidia")])
        self.assertTrue(all("is not built" in d["error"] for d in got))

    def test_a_missing_gpu_never_breaks_the_run(self):
        no_device = self.fake("hdb-bus-cuda", "print('skipped: no CUDA device'); sys.exit(77)\n")
        got = caches.probe_device(no_device, [])
        self.assertIn("no device (skipped: no CUDA device)", got["error"])
        self.assertIn("not built", caches.probe_device(Path(self.tmp, "bin", "hdb-bus-opencl"), [])["error"])
        hangs = self.fake("hdb-bus-cuda-hang", "time.sleep(30)\n")
        self.assertIn("did not finish", caches.probe_device(hangs, [], timeout=0.5)["error"])
        crashes = self.fake("hdb-bus-cuda-crash", "sys.exit(1)\n")
        self.assertIn("exit 1", caches.probe_device(crashes, [])["error"])
        silent = self.fake("hdb-bus-cuda-silent", "pass\n")
        self.assertIn("no document", caches.probe_device(silent, [])["error"])
        # an OpenCL device on the CPU (PoCL) has no L2 of its own; its context names none
        pocl = self.fake("hdb-bus-opencl", self.writes({"kind": "opencl", "type": "cpu", "name": "pthread",
                                                        "global_memory_bytes": 23 * G}))
        got = caches.probe_device(pocl, [])
        self.assertEqual((got["type"], got["l2_bytes"]), ("cpu", None))


class FitTest(TempDirCase):
    """caches.fit on the shipped `default`: fixture LLCs, GPUs and memory."""

    def fitted(self, m, cfg=None):
        cfg = cfg or load("default")
        out, record = caches.fit(cfg, m)
        return {e["name"]: e for e in plan(out)}, record

    def test_default_asks_for_2x_the_caches_up_to_1g(self):
        self.assertEqual(load("default")["beyond_caches"], {"factor": 2, "max_size": "1G"})
        self.assertNotIn("beyond_caches", load("quick"))  # CI's smoke run: no probe, no larger sizes

    def test_32m_llc_leaves_default_as_it_is(self):
        before = {e["name"]: e for e in plan(load("default"))}
        after, record = self.fitted(machine(32 * M))
        self.assertEqual(before, after)
        for bench in ("bus", "ra", "tpch", "merge"):
            e = record["benchmarks"][bench]
            self.assertEqual((e["configured"], e["largest"], e["reached"], e["target"]),
                             (256 * M, 256 * M, True, 64 * M))
        # ngram runs a size list (32K..32M) for every variant: not extended, and said so
        ngram = record["benchmarks"]["ngram"]
        self.assertEqual((ngram["largest"], ngram["reached"], ngram["limits"]), (32 * M, False, ["configuration"]))
        self.assertEqual(record["short_of"], [f"ngram: {ngram['reason']}"])
        self.assertTrue(ngram["reason"].startswith("largest size 32M < 2x the 32M LLC = 64M: the configuration"))
        self.assertNotIn("ssb", record["benchmarks"])  # no size sweep: its tables follow --sf
        self.assertEqual(caches.headline_note(record, ["ra", "tpch", "merge"]),
                         "The largest sizes follow this machine's caches: at least 2x the 32M LLC (64M).")

    def test_480m_llc_extends_default_to_1g(self):
        entries, record = self.fitted(machine(480 * M))
        for bench in ("ra", "tpch", "merge"):
            for backend in ("cpu", "opencl", "cuda"):
                big = entries[f"{bench}-{backend}-large"]
                self.assertEqual(arg(big, "--sizes"), "1G", big["name"])
                # 4x the size, 4x the time limit ([bench.ra.large] has its own: from unsorted input it sorts)
                self.assertEqual(big["timeout_s"], 4 * (1500 if bench == "ra" else 600))
            self.assertEqual(record["benchmarks"][bench]["largest"], G)
            self.assertGreaterEqual(record["benchmarks"][bench]["largest"], 960 * M)
        self.assertEqual(arg(entries["ra-duckdb-large"], "--sizes"), "1G")  # the peer follows
        self.assertEqual(arg(entries["ra-cpu"], "--sizes"), "32K,128K,512K,2M,8M,32M")  # the main sweep stays
        self.assertEqual((arg(entries["bus-cpu"], "--min-size"), arg(entries["bus-cpu"], "--max-size")), ("32K", "1G"))
        self.assertEqual(caches.headline_note(record, ["ra", "tpch", "merge"]),
                         "The largest sizes follow this machine's caches: at least 2x the 480M LLC (960M).")
        self.assertIn("ngram (32M < 2x the 480M LLC: configuration)", caches.headline_note(record))

    def test_memory_caps_and_says_so(self):
        # 24 GB available: tpch holds up to 24 bytes per input byte, 1G does not fit, 512M does
        entries, record = self.fitted(machine(480 * M, memory=24 * G))
        self.assertEqual(arg(entries["tpch-cpu-large"], "--sizes"), "512M")
        self.assertEqual(entries["tpch-cpu-large"]["timeout_s"], 2 * 600)
        self.assertEqual(arg(entries["ra-cpu-large"], "--sizes"), "1G")  # ra: 12 bytes per byte, 1G fits
        tpch = record["benchmarks"]["tpch"]
        self.assertEqual((tpch["reached"], tpch["limits"]), (False, ["memory"]))
        self.assertTrue(tpch["reason"].startswith("largest size 512M < 2x the 480M LLC = 960M: memory"), tpch["reason"])
        self.assertIn(f"tpch: {tpch['reason']}", record["short_of"])
        self.assertEqual(caches.headline_note(record, ["ra", "tpch", "merge"]),
                         "The largest sizes stop short of 2x the caches for tpch (512M < 2x the 480M LLC: memory).")
        # never below what the configuration asks: the executables skip a case that does not fit
        entries, record = self.fitted(machine(480 * M, memory=2 * G))
        self.assertEqual(arg(entries["tpch-cpu-large"], "--sizes"), "256M")
        # ranks on one host share its memory
        _, record = self.fitted(machine(480 * M, memory=96 * G, ranks_per_host=4))
        self.assertEqual(record["benchmarks"]["tpch"]["largest"], 512 * M)

    def test_time_budget_caps_and_says_so(self):
        entries, record = self.fitted(machine(G))
        self.assertEqual(arg(entries["ra-cpu-large"], "--sizes"), "1G")
        ra = record["benchmarks"]["ra"]
        self.assertEqual((ra["reached"], ra["limits"], ra["target"]), (False, ["time"], 2 * G))
        self.assertEqual(ra["reason"], "largest size 1G < 2x the 1G LLC = 2G: time ([beyond_caches] max_size 1G)")
        self.assertEqual(caches.headline_note(record, ["ra", "merge"]),
                         "The largest sizes stop short of 2x the caches for ra and merge (1G < 2x the 1G LLC: time).")

    def test_the_device_l2_and_memory(self):
        # a GPU's L2 larger than the host's LLC sets the target of the benchmarks it runs
        entries, record = self.fitted(machine(32 * M, devices=[gpu(200 * M)]))
        self.assertEqual(record["benchmarks"]["ra"]["cache"], {"what": "cuda L2", "bytes": 200 * M})
        self.assertEqual(arg(entries["ra-cuda-large"], "--sizes"), "512M")
        cfg = config.apply_overrides(load("default"), backends=["cpu"])
        _, record = self.fitted(machine(32 * M, devices=[gpu(200 * M)]), cfg)
        self.assertEqual(record["benchmarks"]["ra"]["cache"]["what"], "LLC")  # no cuda in the run
        # a small GPU's memory caps the size both processors are compared at
        entries, record = self.fitted(machine(480 * M, devices=[gpu(50 * M, memory=8 * G)]))
        self.assertEqual(arg(entries["ra-cpu-large"], "--sizes"), "512M")  # 8G x 0.8 / 12 bytes per byte: 512M
        ra = record["benchmarks"]["ra"]
        self.assertEqual((ra["largest"], ra["limits"]), (512 * M, ["memory"]))
        self.assertIn("of cuda device memory usable", ra["reason"])
        # a device that was not there, or an OpenCL device on the CPU, counts for nothing
        for d in ({"backend": "cuda", "error": "hdb-bus-cuda: no device"},
                  {"backend": "opencl", "type": "cpu", "l2_bytes": G, "memory_bytes": G}):
            _, record = self.fitted(machine(32 * M, devices=[d]))
            self.assertEqual(record["benchmarks"]["ra"]["cache"], {"what": "LLC", "bytes": 32 * M})

    def test_unknown_cache_changes_nothing(self):
        before = {e["name"]: e for e in plan(load("default"))}
        entries, record = self.fitted(machine(0))
        self.assertEqual(entries, before)
        self.assertIsNone(record["benchmarks"]["ra"]["reached"])
        self.assertIn("ra (no cache size known)", caches.headline_note(record, ["ra"]))

    def test_a_sweep_in_harness_keeps_its_lower_end(self):
        beyond = {"factor": 2, "max_size": "1G"}
        cfg = config.validate({"benchmarks": ["ra"], "backends": ["cpu"], "beyond_caches": beyond,
                               "harness": {"min_size": "1M", "max_size": "64M"}})
        entries, record = self.fitted(machine(480 * M), cfg)
        self.assertEqual((arg(entries["ra-cpu"], "--min-size"), arg(entries["ra-cpu"], "--max-size")), ("1M", "1G"))
        cfg["harness"] = {"size_class": 2}
        entries, _ = self.fitted(machine(480 * M), cfg)
        self.assertEqual((arg(entries["ra-cpu"], "--size-class"), arg(entries["ra-cpu"], "--max-size")), ("2", "1G"))
        # a large table with several sizes: its largest is replaced, the others stay
        cfg = config.validate({"benchmarks": ["ra"], "backends": ["cpu"], "beyond_caches": beyond,
                               "bench": {"ra": {"large": {"sizes": "64M,256M", "timeout_s": 100}}}})
        entries, _ = self.fitted(machine(480 * M), cfg)
        big = entries["ra-cpu-large"]
        self.assertEqual((arg(big, "--sizes"), big["timeout_s"]), ("64M,1G", 400))

    def test_the_command_line_wins(self):
        cfg = config.apply_overrides(load("default"), sizes="1M")
        self.assertNotIn("beyond_caches", cfg)  # --sizes names every size that runs
        cfg = config.apply_overrides(load("default"), timeout=60)
        entries, _ = self.fitted(machine(480 * M), cfg)
        self.assertEqual((arg(entries["ra-cpu-large"], "--sizes"), entries["ra-cpu-large"]["timeout_s"]), ("1G", 60))

    def test_bad_tables_name_the_problem(self):
        for table, text in (({"factor": 2}, "'max_size' is required"),
                            ({"max_size": "1G"}, "'factor' is required"),
                            ({"factor": 0.5, "max_size": "1G"}, "'factor' must be"),
                            ({"factor": 2, "max_size": "big"}, "max_size"),
                            ({"factor": 2, "max_size": "1G", "scale_timeouts": 1}, "'scale_timeouts'"),
                            ({"factor": 2, "max_size": "1G", "max": 3}, "unknown key 'max'"),
                            ("2x", "must be a table")):
            with self.assertRaises(UsageError) as ctx:
                config.validate({"beyond_caches": table}, "t.toml")
            self.assertIn(text, str(ctx.exception))
            self.assertIn("t.toml [beyond_caches]", str(ctx.exception))


class RunTest(TempDirCase):
    """The driver sizes a new run before it starts it, and run.json keeps what it chose and why."""

    CONFIG = """
description = "caches test"
benchmarks = ["bus", "ra"]
backends = ["cpu", "cuda"]
timeout_s = 60
[beyond_caches]
factor = 1
max_size = "64K"
[harness]
sizes = "32K"
[bench.ra.large]
sizes = "32K"
"""

    def test_the_runner_records_the_sizes(self):
        cfg = config.validate(json.loads(json.dumps(
            {"benchmarks": ["ra"], "backends": ["cpu"], "timeout_s": 60,
             "beyond_caches": {"factor": 2, "max_size": "1G"},
             "bench": {"ra": {"large": {"sizes": "256M"}}}})), "t.toml")
        stream = io.StringIO()
        r = Runner(REPO, str(Path(self.tmp, "out")), str(Path(self.tmp, "build")), cfg, "t.toml", do_setup=False,
                   do_build=False, stream=stream)
        self.addCleanup(r.close)
        r.fit_to_caches(machine(480 * M, memory=24 * G))
        with Path(r.run_dir, "run.json").open() as f:
            m = json.load(f)
        big = next(e for e in m["entries"] if e["name"] == "ra-cpu-large")
        self.assertEqual((arg(big, "--sizes"), big["timeout_s"]), ("1G", 240))
        self.assertEqual(m["beyond_caches"]["benchmarks"]["ra"]["largest"], G)
        self.assertEqual(m["config"]["bench"]["ra"]["large"]["sizes"], "1G")
        self.assertEqual(caches.read_record(r.run_dir), m["beyond_caches"])
        self.assertIn("ra: largest size 256M -> 1G", stream.getvalue())

    def test_run_all_with_no_gpu(self):
        build = self.make_fakes({"bus-cpu": "ok", "bus-cuda": "skip", "ra-cpu": "ok", "ra-cuda": "skip"})
        cfg, out = Path(self.tmp, "t.toml"), str(Path(self.tmp, "results"))
        cfg.write_text(self.CONFIG)
        log = str(Path(self.tmp, "calls.jsonl"))
        p = script("run-all", "--config", str(cfg), "--build-dir", build, "--out", out, "--no-setup", "--no-build",
                   "--no-report", env={"FAKE_LOG": log})
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("run-all: sizes beyond the caches: host LLC", p.stdout)
        self.assertIn("cuda: hdb-bus-cuda: no device", p.stdout)
        run = next(Path(out).iterdir())
        m = json.loads((run / "run.json").read_text())
        rec = m["beyond_caches"]
        self.assertEqual([d["backend"] for d in rec["devices"]], ["cuda"])
        self.assertIn("no device", rec["devices"][0]["error"])
        entries = {e["name"]: e for e in m["entries"]}
        self.assertEqual(entries["ra-cpu-large"]["status"], "ok")
        if rec["llc"]["bytes"]:  # any real LLC is beyond 64K: the time budget (max_size 64K) caps
            self.assertEqual(arg(entries["ra-cpu-large"], "--sizes"), "64K")
            self.assertEqual(rec["benchmarks"]["ra"]["limits"], ["time"])
        probes = [json.loads(line) for line in Path(log).read_text().splitlines()]
        self.assertIn("h2d/copy", probes[0]["args"])  # the probe ran first, before bus
        self.assertEqual(probes[0]["name"], "hdb-bus-cuda")
