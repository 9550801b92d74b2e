"""The shipped configurations load; overrides and per-benchmark tables combine as documented."""
import json
import unittest
from pathlib import Path

from helpers import REPO

from hdb import config
from hdb.runner import plan
from hdb.util import UsageError


class ConfigTest(unittest.TestCase):
    def load(self, name):
        return config.load(config.resolve_config_path(REPO, name))

    def test_shipped_configs_load(self):
        for name in ("quick", "default", "full"):
            cfg = self.load(name)
            self.assertEqual(cfg["benchmarks"][0], "bus")
            # quick (the CI smoke run) also runs host execution of the CUDA backend, where it is built
            self.assertEqual(set(cfg["backends"]), {"cpu", "opencl", "cuda"} | ({"cuda-host"} if name == "quick"
                                                                               else set()))
        full = config.executable_args(self.load("full"), "ra")
        self.assertEqual(full[full.index("--max-size") + 1], "1G")

    def test_bench_table_replaces_the_size_sweep(self):
        cfg = self.load("default")
        bus = config.executable_args(cfg, "bus")
        self.assertNotIn("--sizes", bus)
        self.assertEqual(bus[bus.index("--max-size") + 1], "256M")
        self.assertEqual(bus[bus.index("--transfer") + 1], "both")
        ra = config.executable_args(cfg, "ra")
        self.assertIn("--sizes", ra)

    def test_scale_factor_benchmarks_get_no_size_options(self):
        # ssb's cases are whole tables: the [harness] sweep and run-all's --sizes are the other
        # benchmarks' (its executables refuse a size option), and its own table may not set one.
        for cfg in (self.load("default"), config.apply_overrides(self.load("default"), sizes="1M")):
            for peer in (False, True):
                args = config.executable_args(cfg, "ssb", peer=peer, backend=None if peer else "cuda")
                self.assertFalse({"--sizes", "--min-size", "--max-size", "--size-class"} & set(args), args)
                self.assertEqual(args[args.index("--sf") + 1], "1")
            self.assertIn("--sizes", config.executable_args(cfg, "ra"))
        for table in ({"sizes": "1M"}, {"max_size": "1G"}, {"size_class": 2}, {"large": {"sizes": "1G"}}):
            with self.assertRaisesRegex(UsageError, r"\[bench\.ssb\]: .*ssb has no input sizes"):
                config.validate({"bench": {"ssb": table}})
        config.validate({"bench": {"ssb": {"args": ["--sf", "2"]}, "ra": {"sizes": "1M"}}})

    def test_overrides_win(self):
        cfg = config.apply_overrides(self.load("default"), benchmarks=["ra", "bus"], backends=["cpu"],
                                     sizes="1M", passes=20, device=1, timeout=5)
        bus = config.executable_args(cfg, "bus")
        self.assertEqual(bus[bus.index("--sizes") + 1], "1M")
        self.assertNotIn("--max-size", bus)
        self.assertEqual(bus[bus.index("--passes") + 1], "20")
        self.assertEqual(bus[bus.index("--max-passes") + 1], "20")  # never below the minimum
        self.assertEqual(bus[bus.index("--device") + 1], "1")
        self.assertEqual([e["name"] for e in plan(cfg)], ["bus-cpu", "ra-cpu", "ra-duckdb"])  # bus first, peers last
        self.assertEqual(plan(cfg)[0]["timeout_s"], 5)

    def test_bench_backends_limit_one_benchmark(self):
        cfg = self.load("cpu-baselines")
        names = [e["name"] for e in plan(cfg)]
        self.assertEqual(names, ["bus-cpu", "bus-opencl", "ra-cpu", "ra-opencl", "merge-cpu", "ngram-cpu"])
        # the command line's backends still win: a benchmark keeps only those of its own among them
        cfg = config.apply_overrides(self.load("cpu-baselines"), backends=["opencl"])
        self.assertEqual([e["name"] for e in plan(cfg)], ["bus-opencl", "ra-opencl"])
        with self.assertRaises(UsageError):
            config.validate({"bench": {"ra": {"backends": ["gpu"]}}})

    def test_large_runs_reach_beyond_the_caches_for_the_selected_cases(self):
        cfg = self.load("default")
        entries = {e["name"]: e for e in plan(cfg)}
        for bench in ("ra", "tpch", "merge"):
            for backend in ("cpu", "opencl", "cuda"):
                big = entries[f"{bench}-{backend}-large"]
                self.assertEqual((big["benchmark"], big["backend"]), (bench, backend))
                a = big["args"]
                self.assertEqual(a[a.index("--sizes") + 1], "256M", bench)
                self.assertNotIn("*/serial", a[a.index("--only") + 1].split(","))
        merge = entries["merge-cpu-large"]["args"]
        self.assertEqual(merge[merge.index("--types") + 1], "u32,u64")  # without args of its own: the benchmark's
        tpch = entries["tpch-cpu-large"]["args"]
        self.assertEqual(tpch[tpch.index("--data") + 1], "random")  # large args replace the benchmark's
        duck = entries["ra-duckdb-large"]["args"]  # a peer gets the sizes and peer_only, not the executables' --only
        self.assertEqual(duck[duck.index("--sizes") + 1], "256M")
        self.assertNotIn("product", duck[duck.index("--only") + 1].split(","))
        self.assertNotIn("tpch-duckdb-large", entries)  # [bench.tpch.large] peers = false
        self.assertIn("tpch-duckdb", entries)
        pg, ngram = entries["ngram-pg_trgm"]["args"], entries["ngram-cpu"]["args"]
        self.assertEqual(pg.count("--sizes"), 1)  # peer_args replace the executables' options they name
        self.assertEqual(pg[pg.index("--sizes") + 1], "32K,512K,2M")
        self.assertEqual(pg[pg.index("--errors") + 1], "0,3,6,9,12")
        self.assertNotIn("--thresholds", ngram)
        self.assertNotIn("ngram-cpu-large", entries)
        for doc, text in (({"bench": {"ra": {"large": {"only": ["*/parallel"]}}}}, "'sizes' is required"),
                          ({"bench": {"ra": {"large": {"sizes": "1G", "only": "x"}}}}, "'only' must be"),
                          ({"bench": {"ra": {"large": {"sizes": "1G", "size": "2G"}}}}, "unknown key 'size'")):
            with self.assertRaises(UsageError) as ctx:
                config.validate(doc, "t.toml")
            self.assertIn(text, str(ctx.exception))

    def test_bad_configs_name_the_problem(self):
        for doc, text in (({"benchmark": ["ra"]}, "unknown key 'benchmark'"),
                          ({"backends": ["gpu"]}, "unknown backends gpu"),
                          ({"harness": {"passes": -1}}, "'passes'"),
                          ({"harness": {"transfer": "dma"}}, "transfer must be"),
                          ({"bench": {"ra": {"timeout_s": 0}}}, "timeout_s"),
                          ({"bench": {"ra": {"args": "--x"}}}, "'args'")):
            with self.assertRaises(UsageError) as ctx:
                config.validate(doc, "t.toml")
            self.assertIn(text, str(ctx.exception))


if __name__ == "__main__":
    unittest.main()


class BackendListTest(unittest.TestCase):
    """config/backends.json is the one list of backends: the driver's names and CMake's keys."""

    def test_driver_names_come_from_the_file(self) -> None:
        rows = json.loads((Path(REPO) / "config" / "backends.json").read_text(encoding="utf-8"))["backends"]
        self.assertEqual(config.BACKENDS, [r["name"] for r in rows])
        self.assertEqual(config.DEFAULT_BACKENDS, ["cpu", "opencl", "cuda"])
        self.assertEqual(config.HOST_EXECUTION_BACKENDS, ("cuda-host",))
        for r in rows:
            # hdb-<bench>-<name> is CMake's executable for the key <NAME> (lower case, '_' -> '-').
            self.assertEqual(r["cmake"].lower().replace("_", "-"), r["name"])

    def test_cmake_spells_no_list_of_its_own(self) -> None:
        targets = (Path(REPO) / "cmake" / "HdbTargets.cmake").read_text(encoding="utf-8")
        self.assertIn("config/backends.json", targets)
        self.assertNotIn("foreach(B CPU", targets)
