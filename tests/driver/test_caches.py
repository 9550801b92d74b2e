"""Sizes beyond the caches ([beyond_caches], hdb/caches.py): the host's LLC from sysfs or lscpu, and
measured by a latency sweep of hdb-bus-cpu (VMs misreport it: issue 46), a GPU's L2 from a probe of
hdb-bus-<backend>, and the largest sizes of `default` raised to at least 2x the larger cache where
memory and the time budget allow, the reason recorded where they do not."""
import io
import json
import os
import random
import subprocess
import sys
import unittest
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


def fake_sysfs(root, llc, groups):
    """A /sys/devices/system/cpu at root of one L1d/L1i/L2 per CPU and an LLC shared by each group of
    CPUs."""
    if not root.exists():
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


class HostCacheTest(TempDirCase):
    def sysfs(self, llc="32768K", groups=("0-1",)):
        return fake_sysfs(Path(self.tmp, "cpu"), llc, groups)

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


# The latency curve of a 2-core EPYC VM here (hdb-bus-cpu --only latency/serial, 4K..1G; issue 46):
# sysfs and lscpu say 32 MB of L3, the loads slow down 6x past 4 MB (an L3 that other tenants share).
VM_CURVE = [(4 * K, 1.4), (8 * K, 1.4), (16 * K, 1.4), (32 * K, 1.4), (64 * K, 4.1), (128 * K, 4.2), (256 * K, 4.3),
            (512 * K, 5.3), (M, 9.2), (2 * M, 15.3), (4 * M, 16.7), (8 * M, 102), (16 * M, 130), (32 * M, 143),
            (64 * M, 156), (128 * M, 161), (256 * M, 172), (512 * M, 181), (G, 207)]


def up_to(curve, largest):
    return [(s, ns) for s, ns in curve if s <= largest]


class KneeTest(unittest.TestCase):
    """caches.cache_levels and find_llc: the knees of a latency curve, and the last-level cache."""

    def test_the_vm_curve(self):
        levels = caches.cache_levels(VM_CURVE)
        # 32K -> 64K: 2.9x; 512K -> 1M -> 2M: 1.7x twice, one level ending at 1M; 4M -> 8M: 6x
        self.assertEqual([lv["bytes"] for lv in levels], [32 * K, M, 4 * M])
        self.assertEqual([lv["ns_per_load"] for lv in levels], [1.4, 9.2, 16.7])
        self.assertEqual(caches.find_llc(VM_CURVE), (4 * M, levels, ""))
        self.assertEqual(caches.find_llc(reversed(VM_CURVE))[0], 4 * M)  # sorted by size first
        self.assertEqual(caches.find_llc(up_to(VM_CURVE, 16 * M))[0], 4 * M)  # 4x past the knee: enough
        # the same VM, other sweeps: a busier neighbour (the step into memory spread over 4M-8M-16M: its
        # level ends at 8M, already memory at 83 ns) and a quieter one (8M still in the cache)
        busy = [(s, ns) for s, ns in VM_CURVE if s <= 4 * M] + [(8 * M, 82.8), (16 * M, 130), (32 * M, 138),
                                                                  (64 * M, 150), (128 * M, 154)]
        found, levels, _ = caches.find_llc(busy)
        self.assertEqual(([lv["bytes"] for lv in levels], found), ([32 * K, M, 8 * M], 4 * M))
        quiet = [(s, ns) for s, ns in VM_CURVE if s <= 4 * M] + [(8 * M, 20.1), (16 * M, 123.7), (32 * M, 138.4),
                                                                   (64 * M, 152.6), (128 * M, 154.5)]
        self.assertEqual(caches.find_llc(quiet)[0], 8 * M)

    def test_no_knee(self):
        flat = [(K << i, 1.4 + 0.01 * i) for i in range(2, 20)]
        found, levels, why = caches.find_llc(flat)
        self.assertEqual((found, levels), (None, []))
        self.assertIn("no knee", why)
        self.assertIn("too few", caches.find_llc(VM_CURVE[:2])[2])
        self.assertEqual(caches.find_llc([]), (None, [], "0 sizes measured, too few for a curve"))

    def test_a_sweep_that_stops_inside_the_caches_is_inconclusive(self):
        for largest, text in ((M, "not clearly memory"), (4 * M, "not clearly memory"),
                              (8 * M, "less than 4x the knee at 4M")):
            found, levels, why = caches.find_llc(up_to(VM_CURVE, largest))
            self.assertIsNone(found, largest)
            self.assertTrue(levels, largest)
            self.assertIn(text, why)
        # an L3 slower than a third of memory (40 ns of 110): the L2 below it is no last level
        slow_l3 = [(s, 1.0 if s <= 32 * K else 4.0 if s <= M else 40.0 if s <= 8 * M else 110.0)
                   for s in (K << i for i in range(2, 21))]
        found, levels, why = caches.find_llc(slow_l3)
        self.assertEqual([lv["bytes"] for lv in levels], [32 * K, M, 8 * M])
        self.assertIsNone(found)
        self.assertIn("4M, 4x past the knee at 1M or more, takes 40 ns per load, under 50 ns", why)
        # a step within memory (TLB misses past 64M): no cache, the LLC is below it
        tlb = [(s, ns * (1.6 if s > 64 * M else 1)) for s, ns in VM_CURVE]
        found, levels, _ = caches.find_llc(tlb)
        self.assertEqual(([lv["bytes"] for lv in levels], found), ([32 * K, M, 4 * M, 64 * M], 4 * M))

    def test_noise(self):
        # a neighbour's burst slows one size down (a point above a later one counts as the later one),
        # and +-4 % on every point (the 1.66x of the spread knee at 1M stays above 1.5x): the same knees
        rng = random.Random(46)
        for _ in range(50):
            noisy = [(s, ns * rng.uniform(0.96, 1.04)) for s, ns in VM_CURVE]
            noisy[5] = (noisy[5][0], noisy[5][1] * 3)   # 128K
            noisy[15] = (noisy[15][0], noisy[15][1] * 2)  # 128M
            self.assertEqual([lv["bytes"] for lv in caches.cache_levels(noisy)], [32 * K, M, 4 * M], noisy)
            self.assertEqual(caches.find_llc(noisy)[0], 4 * M)

    def test_the_sweep_reaches_4x_the_reported_cache(self):
        self.assertEqual(caches.latency_max_size(32 * M, 24 * G), 128 * M)
        self.assertEqual(caches.latency_max_size(M, 24 * G), 64 * M)      # at least 64M
        self.assertEqual(caches.latency_max_size(480 * M, 24 * G), G)     # at most 1G
        self.assertEqual(caches.latency_max_size(0, 24 * G), G)           # none reported: as far as it goes
        self.assertEqual(caches.latency_max_size(480 * M, 2 * G), 256 * M)  # bus's 4 bytes per byte of 80 %


# A stand-in for hdb-bus-cpu's latency sweep: one result per power of two from --min-size to --max-size,
# its loads slowing down past 32K, 1M and KNEE (the last level); its options appended to `log`.
LATENCY_FAKE = """
def size(t):
    return int(t[:-1]) << {{"K": 10, "M": 20, "G": 30}}[t[-1]]
lo, hi = size(args[args.index("--min-size") + 1]), size(args[args.index("--max-size") + 1])
open({log!r}, "a").write(" ".join(args[:-2]) + "\\n")
def ns(s):
    if s > {knee}:
        return 100.0 + 5 * (s // {knee}).bit_length()
    return 1.4 if s <= 32 << 10 else 4.2 if s <= 1 << 20 else 15.0
results, s = [], lo
while s <= hi:
    results.append({{"test": "latency", "variant": "serial", "status": "ok", "size_bytes": s,
                    "extra": {{"ns_per_load": ns(s), "lines": s // 64}}}})
    s *= 2
json.dump({{"schema": "hetdb-bench/2", "benchmark": "bus", "backend": "cpu", "results": results}}, open(out, "w"))
"""


class MeasureTest(TempDirCase):
    """The host's LLC measured: a VM's inflated sysfs value (480 MB) and a fake hdb-bus-cpu whose latency
    curve has its knee at 32 MB; the suite sizes for the knee and says what was reported."""

    def setUp(self):
        super().setUp()
        self.log = Path(self.tmp, "latency.log")
        self.bin = Path(self.tmp, "bin")
        self.bin.mkdir()

    def sysfs(self, groups=("0-1",)):
        """480 MB of L3 shared by each group of CPUs, as a VM here reports."""
        return fake_sysfs(Path(self.tmp, f"sysfs-{len(groups)}"), "491520K", groups)

    def fake(self, body, name="hdb-bus-cpu"):
        return ProbeTest.fake(self, name, body)

    def fake_sweep(self, knee=32 * M):
        return self.fake(LATENCY_FAKE.format(log=str(self.log), knee=knee))

    def cfg(self, **beyond):
        return config.validate({"benchmarks": ["ra"], "backends": ["cpu"], "timeout_s": 60,
                                "beyond_caches": {"factor": 2, "max_size": "1G", **beyond},
                                "bench": {"ra": {"large": {"sizes": "32K"}}}}, "t.toml")

    def test_the_suite_finds_the_real_knee(self):
        self.fake_sweep()
        m = caches.survey(self.cfg(), self.bin, sysfs=self.sysfs())
        llc = m.llc
        self.assertEqual((llc["bytes"], llc["measured_bytes"], llc["reported_bytes"]), (32 * M, 32 * M, 480 * M))
        self.assertEqual([lv["bytes"] for lv in llc["levels"]], [32 * K, M, 32 * M])
        self.assertNotIn("measure_problem", llc)
        self.assertTrue(llc["source"].startswith("measured: the knee of a latency sweep (hdb-bus-cpu --only "
                                                 "latency/serial --min-size 4K"), llc["source"])
        self.assertIn("reported: sysfs", llc["source"])
        # 4x the reported 480M is past 1G: the sweep stops there, or where the memory does
        largest = caches.latency_max_size(480 * M, caches.available_memory())
        self.assertEqual(llc["measured_by"], " ".join(["hdb-bus-cpu", *caches.LATENCY_ARGS, "--max-size",
                                                       config.format_size(largest)]))
        self.assertEqual(self.log.read_text().split("\n")[0], " ".join(caches.LATENCY_ARGS[:] + [
            "--max-size", config.format_size(largest)]))
        # the sizes: 2x the 32M measured, not 2x the 480M reported
        fitted, record = caches.fit(self.cfg(), m)
        self.assertEqual(fitted["bench"]["ra"]["large"]["sizes"], "64M")
        ra = record["benchmarks"]["ra"]
        self.assertEqual((ra["target"], ra["largest"], ra["reached"]), (64 * M, 64 * M, True))
        self.assertEqual(ra["cache"], {"what": "LLC", "bytes": 32 * M, "measured": True, "reported_bytes": 480 * M})
        self.assertEqual(record["llc"]["measured_bytes"], 32 * M)
        self.assertEqual(caches.headline_note(record),
                         "The largest sizes follow this machine's caches: at least 2x the 32M LLC (measured; 480M "
                         "reported): 64M.")
        self.assertEqual(caches.host_cache(record), (32 * M, "32M LLC (measured; 480M reported)"))
        self.assertIn("host LLC 32M measured, 480M reported (measured: ", caches.summary_lines(record)[0])

    def test_every_instance_counts(self):
        self.fake_sweep()
        llc = caches.survey(self.cfg(), self.bin, sysfs=self.sysfs(("0", "1"))).llc  # two LLCs of 480 MB
        self.assertEqual((llc["bytes"], llc["measured_bytes"], llc["reported_bytes"], llc["instances"]),
                         (64 * M, 32 * M, 960 * M, 2))
        self.assertIn(" x 2 instances", llc["source"])

    def test_a_probe_that_fails_leaves_the_reported_size_and_says_why(self):
        for body, text in (("print('bus: error: no such test latency'); sys.exit(2)\n",
                            "hdb-bus-cpu: exit 2 (bus: error: no such test latency)"),
                           ("json.dump({'results': []}, open(out, 'w'))\n", "wrote no latency results"),
                           ("sys.exit(0)\n", "wrote no latency results")):
            self.fake(body)
            llc = caches.survey(self.cfg(), self.bin, sysfs=self.sysfs()).llc
            self.assertEqual((llc["bytes"], llc["reported_bytes"], llc["measured_bytes"]), (480 * M, 480 * M, None))
            self.assertIn(text, llc["measure_problem"])
            self.assertTrue(llc["source"].startswith("sysfs"), llc["source"])
            _, record = caches.fit(self.cfg(), caches.Machine(llc, [], 24 * G))
            self.assertEqual(record["benchmarks"]["ra"]["cache"], {"what": "LLC", "bytes": 480 * M})
            self.assertIn(f"not measured: {llc['measure_problem']}", caches.summary_lines(record)[0])
            self.assertEqual(caches.host_cache(record), (480 * M, "480M LLC"))
        hangs = self.fake("time.sleep(30)\n", "hdb-bus-cpu-hang")
        got = caches.measure_llc(hangs, 480 * M, timeout=0.5)
        self.assertEqual(got["measured_bytes"], None)
        self.assertEqual(got["measure_problem"], "hdb-bus-cpu-hang did not finish the sweep in 0.5 s")
        got = caches.measure_llc(Path(self.tmp, "nowhere", "hdb-bus-cpu"), 480 * M)
        self.assertEqual(got["measure_problem"], "hdb-bus-cpu is not built")
        # a curve that does not tell (a sweep inside the caches): the reported size, and why
        self.fake_sweep(knee=G)
        llc = caches.survey(self.cfg(), self.bin, sysfs=self.sysfs()).llc
        self.assertEqual((llc["bytes"], llc["measured_bytes"]), (480 * M, None))
        self.assertIn("not clearly memory", llc["measure_problem"])

    def test_measure_caches_false_reads_the_reported_size(self):
        self.fake_sweep()
        llc = caches.survey(self.cfg(measure_caches=False), self.bin, sysfs=self.sysfs()).llc
        self.assertEqual(llc["bytes"], 480 * M)
        self.assertNotIn("measured_by", llc)
        self.assertFalse(self.log.exists())  # no sweep ran
        with self.assertRaises(UsageError) as ctx:
            config.validate({"beyond_caches": {"factor": 2, "max_size": "1G", "measure_caches": "yes"}}, "t.toml")
        self.assertIn("'measure_caches' must be true or false", str(ctx.exception))

    def test_the_run_and_its_report_use_the_measured_size(self):
        """run.json keeps the measurement (beyond_caches.llc and context.llc); the plausibility check of
        the run's host documents and the headline count against it."""
        from hdb import headline, plausibility, results
        self.fake_sweep(knee=4 * M)
        m = caches.survey(self.cfg(), self.bin, sysfs=self.sysfs())
        r = Runner(REPO, str(Path(self.tmp, "out")), str(Path(self.tmp, "build")), self.cfg(), "t.toml",
                   do_setup=False, do_build=False, stream=io.StringIO())
        self.addCleanup(r.close)
        r.fit_to_caches(m)
        manifest = json.loads(Path(r.run_dir, "run.json").read_text())
        self.assertEqual(manifest["beyond_caches"]["llc"]["measured_bytes"], 4 * M)
        ctx = manifest["context"]["llc"]
        self.assertEqual((ctx["measured_bytes"], ctx["reported_bytes"], ctx["instances"]), (4 * M, 480 * M, 1))
        self.assertEqual([lv["bytes"] for lv in ctx["levels"]], [32 * K, M, 4 * M])
        # the run's documents: a cpu one, a cuda one with its own L2
        from make_fixture import document, record
        raw = Path(r.run_dir, results.RAW_DIR)
        raw.mkdir(exist_ok=True)
        cpu = document("ra", "cpu", [record("select", "parallel", 32 * M, 2e-3)], 20.0)
        cpu["context"]["llc_bytes"] = 480 * M
        gpu = document("ra", "cuda", [record("select", "tuned", 32 * M, 1e-4, h2d_s=2e-3)], 3000.0)
        gpu["context"]["device"]["l2_cache_bytes"] = 60 * M
        for d in (cpu, gpu):
            (raw / f"ra-{d['backend']}.json").write_text(json.dumps(d))
        docs = results.load_docs(r.run_dir)
        by = {d["backend"]: d for d in docs}
        self.assertEqual(plausibility.cache_bytes(by["cpu"]), (4 * M, "LLC (measured)"))
        self.assertEqual(plausibility.cache_bytes(by["cuda"]), (60 * M, "L2"))
        self.assertEqual(results.load_docs_tolerant(r.run_dir)[0][0][results.RUN_LLC], 4 * M)
        rec = caches.read_record(r.run_dir)
        sentences = headline.summary(headline.lines(results.all_rows(docs)), headline.processors(docs), docs, rec)
        self.assertIn("Compared at the largest size the CPU and the accelerator both ran: 1 of 1 operations at a size "
                      "beyond the CPU's 4M LLC (measured; 480M reported) and 0 of 1 beyond the 60M cuda L2 "
                      "(memory-bound), the others within them.", sentences)


def _build_with_bus_cpu():
    for d in (os.environ.get("HDB_BUILD_DIR"), Path(REPO, "build-host"), Path(REPO, "build"), Path(REPO, "build-gpu")):
        if d and os.access(Path(d, "bin", caches.LATENCY_EXE), os.X_OK):
            return Path(d)
    return None


class RealSweepTest(TempDirCase):
    """The latency test of a real hdb-bus-cpu over a small sweep (4K..8M, a few seconds)."""

    def test_latency_rises_with_size(self):
        build = _build_with_bus_cpu()
        if build is None:
            self.skipTest("no build with hdb-bus-cpu ($HDB_BUILD_DIR, build-host/, build/, build-gpu/)")
        out = Path(self.tmp, "latency.json")
        p = subprocess.run([Path(build, "bin", caches.LATENCY_EXE), *caches.LATENCY_ARGS, "--max-size", "8M",
                            "--json", out], capture_output=True, text=True, timeout=120)
        if p.returncode == 2 and "latency" in p.stdout + p.stderr:
            self.skipTest(f"{build}/bin/hdb-bus-cpu has no latency test (built before it)")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        curve = sorted((r["size_bytes"], r["extra"]["ns_per_load"]) for r in json.loads(out.read_text())["results"]
                       if r["test"] == "latency" and r["status"] == "ok")
        self.assertEqual([s for s, _ in curve], [4 * K << i for i in range(12)])
        # rises with size (a noisy neighbour may slow one point: compared with the smallest and the largest)
        self.assertGreater(curve[-1][1], 3 * curve[0][1], curve)
        self.assertTrue(caches.cache_levels(curve), curve)


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
        # the fake hdb-bus-cpu has no latency test: the reported size, and why (the run goes on)
        self.assertIn("not measured: hdb-bus-cpu wrote no latency results", p.stdout)
        self.assertIn("cuda: hdb-bus-cuda: no device", p.stdout)
        run = next(Path(out).iterdir())
        m = json.loads((run / "run.json").read_text())
        rec = m["beyond_caches"]
        self.assertIn("wrote no latency results", rec["llc"]["measure_problem"])
        self.assertIsNone(m["context"]["llc"]["measured_bytes"])
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
