"""hdb.ncu: Nsight Compute's CSV (scripts/gpu-check's ncu stage) beside the traffic profile of host
execution: kernels read in launch order, metrics summed over a pass, the busiest kernel's memory
throughput and top stall, the ratios; the usage errors."""
import json
import tempfile
import unittest
from pathlib import Path

from hdb import ncu

HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
          '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')


def row(kid, kernel, section, metric, unit, value):
    return (f'"{kid}","1","hdb-ra-cuda","h","{kernel}","1","7","(256, 1, 1)","(1024, 1, 1)","0","9.0",'
            f'"{section}","{metric}","{unit}","{value}"')


def kernel_rows(kid, kernel, ld, st, ns, sol, long_sb, wait):
    cmd = "Command line profiler metrics"
    return [row(kid, kernel, cmd, ncu.SECTORS[0], "sector", ld), row(kid, kernel, cmd, ncu.SECTORS[1], "sector", st),
            row(kid, kernel, cmd, ncu.REQUESTS[0], "", ld // 4), row(kid, kernel, cmd, ncu.REQUESTS[1], "", st // 4),
            row(kid, kernel, cmd, ncu.DRAM[0], "byte", ld * 32), row(kid, kernel, cmd, ncu.DRAM[1], "byte", st * 32),
            row(kid, kernel, cmd, ncu.DURATION, "nsecond", ns),
            row(kid, kernel, ncu.SOL_SECTION, ncu.MEMORY_SOL, "%", sol),
            row(kid, kernel, ncu.SOL_SECTION, ncu.DRAM_SOL, "%", 50),
            row(kid, kernel, "Memory Workload Analysis", ncu.MEMORY_SOL, "byte/second", "3,000,000,000"),
            row(kid, kernel, cmd, f"{ncu.STALL_PREFIX}long_scoreboard{ncu.STALL_SUFFIX}", "", long_sb),
            row(kid, kernel, cmd, f"{ncu.STALL_PREFIX}wait{ncu.STALL_SUFFIX}", "", wait),
            row(kid, kernel, "Warp State Statistics", "Warp Cycles Per Issued Instruction", "cycle", "n/a")]


class NcuTest(unittest.TestCase):
    def write(self, d, name, launches=2):
        lines = ["==PROF== Connected to process 1", "case  size  median_ms", HEADER]
        lines += kernel_rows(0, "unnamed>::select_flags(const unsigned int *, int)", 1000, 0, 2000, 80.5, 3.0, 1.0)
        lines += kernel_rows(1, "void hdb::<unnamed>::gather<2>(const unsigned int *)", 3000, 1000, 6000, "1,2",
                             9.5, 2.0)
        # A CUB kernel (its template arguments name the suite's types): not in the profile, not summed.
        lines += kernel_rows(2, "void cub::DeviceScanKernel<hdb::<unnamed>::Tup<2>>(int)", 7, 7, 99999, 1, 1.0, 1.0)
        Path(d, f"ncu-{name}.csv").write_text("\n".join(lines) + "\n")
        traffic = {"launches": launches, "sectors_ld": 2000, "sectors_st": 1000, "requests_ld": 500,
                   "requests_st": 250, "dram_bytes_model": 128000, "model_ms": 0.004}
        doc = {"results": [{"id": "select/paper[x]@256M", "status": "skipped"},
                           {"id": "select/paper[x]@256M", "traffic": traffic}]}
        Path(d, f"traffic-{name}.json").write_text(json.dumps(doc))

    def test_kernels_in_order_and_totals(self):
        with tempfile.TemporaryDirectory() as d:
            self.write(d, "select")
            kernels = ncu.read_ncu(Path(d, "ncu-select.csv"))
            self.assertEqual([ncu.short_name(k["name"]) for k in kernels],
                             ["select_flags", "gather", "DeviceScanKernel"])
            t = ncu.ncu_totals(kernels)
            self.assertEqual((t["kernels"], t["library"], t["sectors"], t["requests"], t["dram"]),
                             (2, 1, 5000, 1250, 160000))
            self.assertAlmostEqual(t["ms"], 0.008)
            # The busiest (longest) kernel: gather, its memory % ("1,2" read as 12) and its top stall.
            self.assertEqual((t["busiest"], t["memory_sol"], t["dram_sol"], t["stall"]),
                             ("gather", 12.0, 50.0, "long_scoreboard (9.5)"))

    def test_table_sets_both_sides_and_their_ratio(self):
        with tempfile.TemporaryDirectory() as d:
            self.write(d, "select")
            Path(d, "ncu-ngram.csv").write_text(HEADER + "\n" + "\n".join(
                kernel_rows(0, "hdb::candidate_kernel", 10, 0, 1000, 5, 1.0, 0.5)) + "\n")
            lines = ncu.table(Path(d), Path(d)).splitlines()
            self.assertEqual(len(lines), 4)
            cells = [c.strip() for c in lines[3].split("|")[1:-1]]  # ncu-select.csv sorts after ncu-ngram.csv
            self.assertEqual(cells[0], "select/paper[x]@256M")
            self.assertEqual(cells[1:5], ["2 / 2 (+ 1)", "5000", "3000", "1.67"])
            self.assertEqual(cells[5:8], ["1250", "750", "1.67"])
            self.assertEqual(cells[10], "1.25")
            ngram = [c.strip() for c in lines[2].split("|")[1:-1]]
            self.assertEqual((ngram[0], ngram[3], ngram[4]), ("ngram", "-", "-"))  # no profile beside it
            # ncu stopped before the profile's last launch: the counts are shown, no ratio.
            self.write(d, "select", launches=5)
            cells = [c.strip() for c in ncu.table(Path(d), Path(d)).splitlines()[3].split("|")[1:-1]]
            self.assertEqual((cells[1], cells[4], cells[7], cells[10]), ("2 / 5 (+ 1)", "-", "-", "-"))

    def test_a_case_of_library_kernels_only_is_summed_over_them(self):
        with tempfile.TemporaryDirectory() as d:
            Path(d, "ncu-cub.csv").write_text(HEADER + "\n" + "\n".join(
                kernel_rows(0, "void select::DeviceSelectSweepKernel<hdb::<unnamed>::Tup<2>>(int)", 70, 9, 1000, 54,
                            1.0, 0.5)) + "\n")
            t = ncu.ncu_totals(ncu.read_ncu(Path(d, "ncu-cub.csv")))
            self.assertEqual((t["kernels"], t["library"], t["library_only"], t["sectors"], t["busiest"]),
                             (0, 1, True, 79, "DeviceSelectSweepKernel"))
            cells = [c.strip() for c in ncu.table(Path(d), Path(d)).splitlines()[2].split("|")[1:-1]]
            self.assertEqual((cells[1], cells[2]), ("0 / - (+ 1, summed)", "79"))

    def test_usage(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(ncu.main([d]), 2)
            self.assertEqual(ncu.main([d, d]), 2)  # no ncu-*.csv


if __name__ == "__main__":
    unittest.main()
