"""The OpenCL backend on several implementations (issue 32): [backend.opencl] platforms runs each
platform as an entry of its own, chosen by name (with the project's ICD folder, so Intel's CPU runtime
in .venv is seen), and the documents of two implementations in one run are two processors in every
table, figure and headline; runs of one implementation each still pair up in compare."""
import copy
import json
import os
import shutil
import types
import unittest
from pathlib import Path

from helpers import FIXTURE, NO_FIGURES, REPO, TempDirCase, script

from hdb import config, headline, results, runner
from hdb.util import UsageError


def cfg_with(backend_table, **top):
    doc = {"benchmarks": ["bus", "ra"], "backends": ["cpu", "opencl"], "backend": {"opencl": backend_table},
           "harness": {"sizes": "32K"}}
    doc.update(top)
    return config.validate(doc)


class PlatformConfigTest(unittest.TestCase):
    def test_each_platform_is_an_entry_of_its_own(self):
        cfg = cfg_with({"platforms": ["pocl", "intel"]})
        names = [e["name"] for e in runner.plan(cfg)]
        self.assertEqual(names, ["bus-cpu", "bus-opencl-pocl", "bus-opencl-intel",
                                 "ra-cpu", "ra-opencl-pocl", "ra-opencl-intel"])
        for e in runner.plan(cfg):
            if e["backend"] == "opencl":
                self.assertEqual(e["executable"], f"hdb-{e['benchmark']}-opencl")
                self.assertEqual(e["args"][e["args"].index("--platform") + 1], e["name"].rsplit("-", 1)[1])
                self.assertEqual(e["args"].count("--platform"), 1)
            else:
                self.assertNotIn("--platform", e["args"])

    def test_without_the_key_one_entry_on_the_first_platform(self):
        names = [e["name"] for e in runner.plan(cfg_with({}))]
        self.assertEqual(names, ["bus-cpu", "bus-opencl", "ra-cpu", "ra-opencl"])

    def test_the_platforms_override_a_platform_key(self):
        cfg = cfg_with({"platforms": ["intel"]}, harness={"sizes": "32K", "platform": 1})
        e = [e for e in runner.plan(cfg) if e["name"] == "ra-opencl-intel"][0]
        self.assertEqual(e["args"].count("--platform"), 1)
        self.assertEqual(e["args"][e["args"].index("--platform") + 1], "intel")

    def test_large_runs_keep_their_platform(self):
        doc = {"benchmarks": ["ra"], "backends": ["opencl"], "backend": {"opencl": {"platforms": ["pocl", "intel"]}},
               "harness": {"sizes": "32K"}, "bench": {"ra": {"large": {"sizes": "1M", "only": ["select"]}}}}
        plan = runner.plan(config.validate(doc))
        large = {e["name"]: e["args"] for e in plan if e["name"].endswith("-large")}
        self.assertEqual(sorted(large), ["ra-opencl-intel-large", "ra-opencl-pocl-large"])
        for name, args in large.items():
            self.assertEqual(args[args.index("--platform") + 1], name.split("-")[2])
        # a platform given by its index keeps it too
        doc["backend"]["opencl"]["platforms"] = ["1"]
        big = [e for e in runner.plan(config.validate(doc)) if e["name"] == "ra-opencl-1-large"][0]
        self.assertEqual(big["args"][big["args"].index("--platform") + 1], "1")

    def test_platform_values_name_the_problem(self):
        for table, words in (({"platforms": []}, "non-empty list"), ({"platforms": ["Intel OpenCL"]}, "lower-case"),
                             ({"platforms": ["pocl", "pocl"]}, "twice"), ({"platforms": "pocl"}, "list")):
            with self.assertRaises(UsageError) as c:
                cfg_with(table)
            self.assertIn(words, str(c.exception))
        with self.assertRaises(UsageError) as c:
            config.validate({"backends": ["cpu"], "backend": {"cpu": {"platforms": ["pocl"]}}})
        self.assertIn("[backend.opencl]", str(c.exception))
        for bad in (-1, True, "two words", ""):
            with self.assertRaises(UsageError):
                config.validate({"harness": {"platform": bad}})
        for good in (0, 3, "intel", "pocl"):
            config.validate({"harness": {"platform": good}})

    def test_quick_runs_every_implementation_it_names(self):
        cfg = config.load(config.resolve_config_path(REPO, "quick"))
        names = {e["name"] for e in runner.plan(cfg)}
        self.assertTrue({"ra-opencl-nvidia", "ra-opencl-pocl", "ra-opencl-intel"} <= names)
        self.assertNotIn("ra-opencl", names)


class PlatformEnvironmentTest(TempDirCase):
    def fake_runner(self, with_vendors):
        repo = str(Path(self.tmp, "repo"))
        Path(repo, ".venv", "etc", "OpenCL", "hdb-vendors" if with_vendors else "other").mkdir(parents=True)
        return types.SimpleNamespace(repo=repo, build_dir=str(Path(self.tmp, "build")), mpi=0)

    def env(self, fake, args, peer=False):
        old = os.environ.pop("OCL_ICD_VENDORS", None)
        try:
            e = {"args": args, **({"peer": "duckdb"} if peer else {})}
            return runner.Runner.environment(fake, e)
        finally:
            if old is not None:
                os.environ["OCL_ICD_VENDORS"] = old

    def test_a_named_platform_sees_the_projects_icd_folder(self):
        fake = self.fake_runner(True)
        vendors = str(Path(fake.repo, ".venv", "etc", "OpenCL", "hdb-vendors"))
        self.assertEqual(self.env(fake, ["--platform", "intel"]).get("OCL_ICD_VENDORS"), vendors)
        self.assertEqual(self.env(fake, ["--sizes", "32K", "--platform=intel"]).get("OCL_ICD_VENDORS"), vendors)
        # an index refers to the system's list: left as it is; so are other entries and peers
        self.assertNotIn("OCL_ICD_VENDORS", self.env(fake, ["--platform", "1"]))
        self.assertNotIn("OCL_ICD_VENDORS", self.env(fake, ["--sizes", "32K"]))
        self.assertNotIn("OCL_ICD_VENDORS", self.env(fake, ["--platform", "intel"], peer=True))

    def test_without_the_folder_the_systems_list(self):
        self.assertNotIn("OCL_ICD_VENDORS", self.env(self.fake_runner(False), ["--platform", "intel"]))


def two_implementations(run_dir):
    """The fixture run with its ra-opencl document twice: on PoCL and on Intel's runtime (slower)."""
    shutil.copytree(FIXTURE, run_dir)
    raw = Path(run_dir, "raw")
    with (raw / "ra-opencl.json").open() as f:
        doc = json.load(f)
    for impl, name, slower in (("pocl", "Portable Computing Language", 1.0), ("intel", "Intel(R) OpenCL", 1.5)):
        d = copy.deepcopy(doc)
        d["context"]["device"].update(platform=name, implementation=impl)
        for r in d["results"]:
            for t in r.get("trials", []):
                for k in ("kernel_s", "total_s"):
                    t[k] *= slower
            for k in ("kernel_s", "total_s"):
                if k in r.get("stats", {}):
                    for s in ("median", "mean", "min", "max"):
                        if s in r["stats"][k]:
                            r["stats"][k][s] *= slower
        with (raw / f"ra-opencl-{impl}.json").open("w") as f:
            json.dump(d, f)
        shutil.copy(raw / "ra-opencl.csv", raw / f"ra-opencl-{impl}.csv")
    (raw / "ra-opencl.json").unlink()
    (raw / "ra-opencl.csv").unlink()
    manifest = Path(run_dir, "run.json")
    with manifest.open() as f:
        m = json.load(f)
    entries = []
    for e in m["entries"]:
        if e["name"] != "ra-opencl":
            entries.append(e)
            continue
        for impl in ("pocl", "intel"):
            entries.append(dict(e, name=f"ra-opencl-{impl}", args=e["args"] + ["--platform", impl]))
    m["entries"] = entries
    with manifest.open("w") as f:
        json.dump(m, f)
    return run_dir


class TwoImplementationsTest(TempDirCase):
    def test_two_implementations_are_two_processors(self):
        docs = results.load_docs(two_implementations(str(Path(self.tmp, "run"))))
        backends = {d["backend"] for d in docs}
        self.assertTrue({"opencl-pocl", "opencl-intel"} <= backends)
        self.assertNotIn("opencl", backends)
        rows = results.all_rows(docs)
        pocl = {r["id"] for r in rows if r["backend"] == "opencl-pocl"}
        intel = {r["id"] for r in rows if r["backend"] == "opencl-intel"}
        self.assertTrue(pocl and pocl == intel)  # the same cases, kept apart, none de-duplicated away
        self.assertEqual({r["implementation"] for r in rows if r["backend"].startswith("opencl")}, {"pocl", "intel"})
        procs = headline.processors(docs)
        self.assertTrue(procs["opencl-intel"].is_device and procs["opencl-pocl"].is_device)

    def test_one_implementation_keeps_its_backend_name(self):
        docs = results.load_docs(FIXTURE)
        self.assertIn("opencl", {d["backend"] for d in docs})

    def test_the_accelerator_of_several_implementations(self):
        self.assertEqual(headline.accelerator({"cpu", "opencl-pocl", "opencl-intel"}), "opencl-intel")
        self.assertEqual(headline.accelerator({"cpu", "cuda", "opencl-pocl"}), "cuda")
        self.assertIsNone(headline.accelerator({"cpu", "duckdb"}))

    def test_the_report_names_both(self):
        run = two_implementations(str(Path(self.tmp, "run")))
        p = script("report", run, env=NO_FIGURES)
        self.assertEqual(p.returncode, 0, p.stderr)
        with Path(run, "report.html").open() as f:
            page = f.read()
        self.assertIn("opencl-pocl", page)
        self.assertIn("opencl-intel", page)
        with Path(run, "summary.csv").open() as f:
            text = f.read()
        self.assertIn("opencl-intel", text)

    def test_compare_pairs_two_implementations_and_says_so(self):
        runs = []
        for impl, name in (("pocl", "Portable Computing Language"), ("intel", "Intel(R) OpenCL")):
            run = str(Path(self.tmp, impl))
            shutil.copytree(FIXTURE, run)
            path = Path(run, "raw", "ra-opencl.json")
            with path.open() as f:
                d = json.load(f)
            d["context"]["device"].update(platform=name, implementation=impl, driver_version=f"{impl} 1.0")
            with path.open("w") as f:
                json.dump(d, f)
            runs.append(run)
        out = str(Path(self.tmp, "cmp"))
        p = script("compare", *runs, "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        with Path(out, "compare.md").open() as f:
            text = f.read()
        self.assertIn("ran on pocl and those of B on intel", text)
        self.assertIn("(intel, driver intel 1.0)", text)


if __name__ == "__main__":
    unittest.main()
