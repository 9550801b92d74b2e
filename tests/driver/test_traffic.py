"""--traffic on cuda-host (results[].traffic, docs/results-schema.md): the contract types every field
and rejects a misspelled one; the report shows what the kernels ask of memory in a section of its own
only when a cuda-host result carries it, a row with CUB/Thrust calls marked kernels only; model_ms is
a model, in no other section. Every document here is synthetic (make_fixture)."""
import copy
import unittest
from pathlib import Path

from helpers import TempDirCase, script

from hdb import report, results
from test_host_execution import SEL, add_host_docs, host_bus, host_ra, sections

import check_results
from make_fixture import document, record

try:
    import jsonschema
except ImportError:
    jsonschema = None

MODEL = {"name": "nvidia-h200", "l2_bytes": 62914560.0, "copy_gbps": 4248.0, "launch_s": 6.784e-06,
         "source": "results/reference/nvidia-h200 (fixture)"}


def traffic(launches=1, library_calls=0, atomics=0, atomic_addresses=0):
    """A traffic object as hdb-*-cuda-host --traffic writes one (figures of project/paper at 1M)."""
    return {"device_model": dict(MODEL), "launches": launches, "blocks": 512, "threads": 131072, "barriers": 0,
            "shuffles": 0, "atomics": atomics, "atomic_addresses": atomic_addresses,
            "requests": 8192, "requests_ld": 4096, "requests_st": 4096,
            "sectors": 49152, "sectors_ld": 32768, "sectors_st": 16384, "requested_bytes": 1048576,
            "delivered_bytes": 1048576,
            "access_width": {"1": 0, "2": 0, "4": 262144, "8": 0, "16": 98304}, "vectorised_accesses": 0,
            "unique_bytes": 1572864, "dram_bytes_model": 1572864, "dram_read_bytes_model": 1048576,
            "dram_write_bytes_model": 524288, "memsets": 0, "device_copies": 0, "library_calls": library_calls,
            "sector_efficiency": 2 / 3, "model_ms": 0.00715425988700565, "traffic_ratio": 1.0,
            "launches_per_op": launches}


def host_ra_traffic():
    """host_ra with traffic on its first two ok cases: the second made of kernels and a CUB call."""
    d = host_ra()
    d["context"]["device"]["traffic_instrumented"] = True
    ok = [r for r in d["results"] if r["status"] == "ok"]
    ok[0]["traffic"] = traffic()
    ok[1]["traffic"] = traffic(launches=3, library_calls=2, atomics=256, atomic_addresses=1)
    return d, ok[0]["id"], ok[1]["id"]


@unittest.skipIf(jsonschema is None, "the jsonschema library is missing (scripts/setup installs it into .venv)")
class TrafficSchema(unittest.TestCase):
    def problems(self, doc):
        return check_results.check_doc(doc, 0)[0]

    def test_a_traffic_document_is_valid_and_a_misspelled_field_is_not(self):
        d = document("ra", "cuda-host", [record("select", "tuned", 1 << 20, 1e-3, params=SEL, ceiling=6.0)], 6.0)
        d["context"]["device"]["traffic_instrumented"] = True
        d["results"][0]["traffic"] = traffic()
        self.assertEqual(self.problems(d), [])
        none = copy.deepcopy(d)
        none["results"][0]["traffic"].update(sector_efficiency=None, traffic_ratio=None)
        self.assertEqual(self.problems(none), [])
        for change, text in ((lambda t: t.update(dram_byte_model=t.pop("dram_bytes_model")), "dram_byte_model"),
                             (lambda t: t.update(model_ms=-1.0), "model_ms"),
                             (lambda t: t["access_width"].update({"32": 1}), "'32' was unexpected"),
                             (lambda t: t.update(device_model="nvidia-h200"), "device_model")):
            bad = copy.deepcopy(d)
            change(bad["results"][0]["traffic"])
            problems = self.problems(bad)
            self.assertTrue(any(text in p for p in problems), (text, problems))
        bad = copy.deepcopy(d)
        bad["context"]["device"]["traffic_instrumented"] = "yes"
        self.assertTrue(any("traffic_instrumented" in p for p in self.problems(bad)))


class TrafficReport(TempDirCase):
    def report(self, docs):
        run = add_host_docs(self.copy_fixture(), docs)
        p = script("report", run, env={"HDB_NO_MATPLOTLIB": "1"})
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with Path(run, "report.md").open() as f:
            return sections(f.read()), run

    def test_the_section_shows_what_the_kernels_ask_of_memory(self):
        d, plain, library = host_ra_traffic()
        sec, run = self.report({"bus-cuda-host": host_bus(), "ra-cuda-host": d})
        text = sec[report.TRAFFIC_SECTION]
        self.assertIn("LRU model of the L2 of nvidia-h200 (60 MiB", text)
        self.assertIn("not a measurement", text)
        self.assertIn("| model ms on nvidia-h200 |", text)
        self.assertIn(f"| {plain} | 1 | 8192 | 66.7% | 4B:262144 16B:98304 | 1.5 MiB | 1.00 | 0.007154 |", text)
        self.assertIn(f"| {library} \u2020 | 3 | 8192 | ", text)  # library calls: its kernels only
        self.assertIn("a row with library calls (\u2020) counts its kernels only", text)
        # The folded table has every other figure.
        self.assertIn(f"| {plain} | 4096/4096 | 32768/16384 | 1 MiB | 1 MiB | 0 | 1.5 MiB | 1 MiB/0.5 MiB | "
                      "512/131072 | 0/0 | 0 (0) | 0/0 | 0 |", text)
        self.assertIn(f"| {library} \u2020 | 4096/4096 | ", text)
        self.assertIn("| 256 (1) | 0/0 | 2 |", text)
        self.assertEqual(len([ln for ln in text.splitlines() if ln.startswith("| select/tuned")]), 4)
        for title, body in sec.items():  # a model of a GPU: nowhere but here
            if title != report.TRAFFIC_SECTION:
                self.assertNotIn("model ms", body, title)
                self.assertNotIn("0.007154", body, title)
        rows = [r for r in results.all_rows(results.load_docs(run)) if r.get("traffic")]
        self.assertEqual({r["id"] for r in rows}, {plain, library})
        self.assertFalse([r for r in results.processor_rows(rows)])

    def test_no_section_without_traffic(self):
        sec, _ = self.report(None)
        self.assertNotIn(report.TRAFFIC_SECTION, sec)
        self.assertIn(report.HOST_SECTION, sec)

    def test_a_traffic_figure_that_cannot_be_used_is_named(self):
        d, plain, _ = host_ra_traffic()
        d["results"][0]["traffic"]["dram_bytes_model"] = "lots"
        bad = results.check_figures(d)
        self.assertEqual([(i, f) for i, f, _, _ in bad], [(plain, "traffic.dram_bytes_model")])


if __name__ == "__main__":
    unittest.main()
