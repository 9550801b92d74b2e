"""32- vs 64-bit keys in the report (scripts/hdb/key_width.py): cases measured at both widths are
paired on everything else at the largest common size and compared per tuple; the report shows the
table and the figure only when a run measured both widths."""
import unittest
from pathlib import Path

from helpers import TempDirCase, has_matplotlib

from hdb import key_width, report, results

from make_fixture import document, record

K, M = 1 << 10, 1 << 20


def sel(variant, key, size, kernel, **kw):
    return record("select", variant, size, kernel, params={"dist": "uniform", "key": key, "selectivity": 0.5}, **kw)


class Pairs(unittest.TestCase):
    def rows(self, *recs):
        return results.all_rows([document("ra", "cpu", list(recs), 40.0)])

    def test_pairs_at_the_largest_common_size_and_compares_per_tuple(self):
        rows = self.rows(sel("parallel", 32, 1 * M, 1e-3), sel("parallel", 64, 1 * M, 1e-3),
                         sel("parallel", 32, 8 * M, 8e-3), sel("parallel", 64, 8 * M, 9e-3),
                         sel("parallel", 32, 32 * M, 32e-3))  # 32 MB only at 32 bits: not a pair
        [(r32, r64)] = key_width.pairs(rows)
        self.assertEqual((r32["size_bytes"], r64["size_bytes"]), (8 * M, 8 * M))
        self.assertEqual((r32["params"]["key"], r64["params"]["key"]), (32, 64))
        # The fixture gives both widths the same element count: 9 ms against 8 ms is 1.125x a tuple.
        self.assertAlmostEqual(key_width.time_per_tuple_ratio(r32, r64), 9 / 8, places=3)
        header, body = key_width.table([(r32, r64)])
        self.assertEqual(body[0][2], "select/parallel[dist=uniform,selectivity=0.5]")
        self.assertEqual(body[0][-1], "1.12x")

    def test_unpaired_failed_and_other_variants_stay_apart(self):
        rows = self.rows(sel("serial", 32, 1 * M, 1e-3), sel("parallel", 64, 1 * M, 1e-3),
                         sel("tbb", 32, 1 * M, 1e-3), sel("tbb", 64, 1 * M, 0, status="skipped", reason="x"),
                         record("select", "parallel", 1 * M, 1e-3, params={"dist": "uniform"}))
        self.assertEqual(key_width.pairs(rows), [])


class Report(TempDirCase):
    def write_run(self, recs):
        raw = Path(self.tmp, "raw")
        raw.mkdir(parents=True)
        import json
        with (raw / "ra-cpu.json").open("w") as f:
            json.dump(document("ra", "cpu", recs, 40.0), f)

    def test_report_shows_both_widths_side_by_side(self):
        self.write_run([sel("parallel", 32, 1 * M, 1e-3), sel("parallel", 64, 1 * M, 2e-3)])
        doc, _, figs, _ = report.build(self.tmp)
        md = doc.markdown()
        self.assertIn("## 32- vs 64-bit keys", md)
        self.assertIn("| ra | cpu | select/parallel[dist=uniform,selectivity=0.5] | 1M |", md)
        self.assertIn("2.00x", md)
        if has_matplotlib():
            self.assertTrue(Path(self.tmp, "plots", "key-width.png").exists())

    def test_no_section_without_both_widths(self):
        self.write_run([sel("parallel", 32, 1 * M, 1e-3)])
        doc, _, _, _ = report.build(self.tmp)
        self.assertNotIn("64-bit keys", doc.markdown())


if __name__ == "__main__":
    unittest.main()
