"""The report's headline (scripts/hdb/headline.py): best implementation per processor, speed-ups over
the best CPU implementation and DuckDB, the break-even size, the stand-in note without a GPU; only
verified results count; the overview has one row per operation and a column per processor (its full
name and the case ids on hover), the details one row per operation and processor with the case ids;
the fixture's report opens with the headline figure, then the overview. Every speed-up carries a 95%
confidence interval from the trials of both sides (a seeded bootstrap of the ratio of the medians)."""
import json
import math
import unittest
from pathlib import Path

import numpy as np

from helpers import NO_FIGURES, REPO, TempDirCase, has_matplotlib, script

from hdb import caches, config, headline, results

from make_fixture import document, record, stats

K, M = 1 << 10, 1 << 20


def rows_of(*docs):
    return results.all_rows(list(docs))


def overview(ls, docs):
    """The overview as {operation: {column: Cell}}, and its header's cells by column."""
    header, rows = headline.overview(ls, headline.processors(docs))
    names = [c.text for c in header]
    return {r[0].title: dict(zip(names, r, strict=True)) for r in rows}, dict(zip(names, header, strict=True))


def details(ls, docs):
    """The details as [{column: text}], one per operation and processor."""
    header, rows = headline.table(ls, headline.processors(docs))
    return [dict(zip(header, r, strict=True)) for r in rows]


def ra_select(variant, size, kernel, h2d=0.0, **kw):
    return record("select", variant, size, kernel, h2d, params={"dist": "uniform", "selectivity": 0.5},
                  transfer="pinned" if h2d else "none", **kw)


# make_fixture.record's three passes take 1, 1.02 and 0.99 times the median: with 3 trials a side the
# bootstrap's 95% interval of a ratio of medians is the range of the ratios of the extreme passes.
LOW, HIGH = 0.99 / 1.02, 1.02 / 0.99


def brackets(v):
    return f"[{v * LOW:.3g}-{v * HIGH:.3g}]"


def with_ci(v):
    return f"{v:.3g}x (95% CI {v * LOW:.3g}-{v * HIGH:.3g})"


JOIN = {"dist": "uniform", "match": 0.5, "fanout": 1}


def duckdb(cases):
    """A DuckDB peer document: (test, variant, params, seconds) per case, at 32M and two thread counts,
    the slower at threads=1."""
    out = []
    for test, variant, params, seconds in cases:
        for t, f in ((2, 1.0), (1, 1.5)):
            r = record(test, variant, 32 * M, seconds * f, params=dict(params, threads=t))
            out.append(r)
    doc = document("ra", "cpu", out, 40.0)
    doc["backend"] = "duckdb"
    return doc


def lognormal(median, spread, n, rng):
    return tuple(rng.lognormal(math.log(median), spread, n))


class BreakEven(unittest.TestCase):
    def setUp(self):
        # The CPU takes 1 ms per MB; the device 0.2 ms per MB plus 2 ms of transfers and set-up.
        sizes = [32 * K, 1 * M, 8 * M, 32 * M]
        self.cpu = document("ra", "cpu", [ra_select("parallel", s, s / M * 1e-3) for s in sizes]
                            + [ra_select("serial", s, 2 * s / M * 1e-3) for s in sizes], 40.0)
        self.gpu = document("ra", "cuda", [ra_select("tuned", s, s / M * 2e-4, h2d=2e-3) for s in sizes]
                            + [ra_select("paper", s, s / M * 4e-4, h2d=2e-3) for s in sizes], 3000.0)

    def test_best_per_processor_speedups_and_break_even(self):
        docs = [self.cpu, self.gpu]
        [ln] = headline.lines(rows_of(*docs))
        self.assertEqual(ln.size, 32 * M)
        self.assertEqual(list(ln.per_backend), ["cpu", "cuda"])
        self.assertEqual(ln.acc, "cuda")
        self.assertEqual(ln.cpu_best["id"], "select/parallel[dist=uniform,selectivity=0.5]@32M")
        rows, head = overview([ln], docs)
        # One row per operation, a column per processor: named short, its full name on hover.
        self.assertEqual(list(head), ["operation", "size", "CPU", "cuda", "break-even size"])
        self.assertEqual(head["CPU"].title, "CPU (fixture CPU, ? threads)")
        self.assertEqual(head["CPU"].note, "(baseline)")
        self.assertEqual(head["cuda"].title, "cuda: fixture GPU")
        self.assertEqual(head["break-even size"].note, "(cuda)")  # the accelerator's
        row = rows["ra select [dist=uniform,selectivity=0.5]"]
        # The only ra select operation: no parameter to tell it apart; all of them in its title.
        self.assertEqual(str(row["operation"]), "ra select")
        self.assertEqual(row["operation"].title, "ra select [dist=uniform,selectivity=0.5]")
        self.assertEqual(row["size"].text, "32M")
        # The speed-up with transfers first, 32 ms / 8.4 ms (+1 us of host time each); kernel only
        # 32 ms / 6.4 ms = 5x after it; the case ids and times on hover.
        cuda = row["cuda"]
        self.assertEqual(cuda.text, f"{32.001 / 8.401:.3g}x")
        self.assertTrue(cuda.strong)
        # Each speed-up with its 95% interval in brackets (the summary says what they are).
        self.assertEqual(cuda.note, f"{brackets(32.001 / 8.401)} (kernel 5x)")  # its interval in the title
        self.assertIn(f"speed-up with PCIe: {with_ci(32.001 / 8.401)}", cuda.title)
        self.assertIn(f"speed-up kernel-only: {with_ci(5)}", cuda.title)
        self.assertIn("best kernel-only: select/tuned[dist=uniform,selectivity=0.5,transfer=pinned]@32M, 6.4 ms",
                      cuda.title)
        self.assertIn("best with PCIe: the same case, 8.401 ms", cuda.title)
        self.assertEqual(row["CPU"].text, "32 ms")  # the baseline: its time
        self.assertIn("best kernel-only: select/parallel[dist=uniform,selectivity=0.5]@32M", row["CPU"].title)
        # 2 ms of transfers: slower at 1M (1 ms on the CPU), faster from 8M on.
        self.assertEqual(row["break-even size"].text, "8M (slower at 1M)")
        # The details: one row per operation and processor, the case ids and times.
        cpu, gpu = details([ln], docs)
        self.assertEqual(gpu["processor"], "cuda")
        self.assertEqual(gpu["best kernel-only (case id)"],
                         "select/tuned[dist=uniform,selectivity=0.5,transfer=pinned]@32M")
        self.assertEqual(gpu["kernel ms"], "6.4")
        self.assertEqual(gpu["best with PCIe (case id)"], "same")
        self.assertEqual(gpu["with-PCIe ms"], "8.401")
        self.assertEqual(gpu["speed-up with PCIe"], with_ci(32.001 / 8.401))
        self.assertEqual(gpu["speed-up kernel-only"], with_ci(5))
        self.assertEqual((cpu["speed-up with PCIe"], cpu["speed-up kernel-only"]), ("-", "-"))  # the baseline
        self.assertEqual(cpu["best kernel-only (case id)"], "select/parallel[dist=uniform,selectivity=0.5]@32M")
        self.assertEqual(cpu["operation"], "ra select [dist=uniform,selectivity=0.5]")

    def test_a_peer_on_the_device_has_both_speedups_and_its_bars(self):
        """CuPy records PCIe transfers like a device backend: its column and the figure give its
        kernel-only and with-transfers speed-ups; DuckDB's (host) results never count as that peer."""
        cupy = document("ra", "cuda", [ra_select("cupy", s, s / M * 1e-3 / 4, h2d=4e-3) for s in (1 * M, 32 * M)],
                        0.0)
        cupy["backend"] = "cupy"
        docs = [self.cpu, self.gpu, cupy]
        [ln] = headline.lines(rows_of(*docs))
        self.assertEqual(headline.device_peers([ln]), ["cupy"])
        self.assertEqual(headline.device_peers(headline.lines(rows_of(self.cpu, duckdb(
            [("select", "sql_table", {"dist": "uniform", "selectivity": 0.5}, 0.01)])))), [])
        self.assertAlmostEqual(ln.backend_speedup("cupy", "kernel_median_s"), 32.001 / 8.001, places=3)
        self.assertAlmostEqual(ln.backend_speedup("cupy", "total_median_s"), 32.001 / 12.001, places=3)
        self.assertIsNone(ln.backend_speedup("duckdb", "total_median_s"))
        rows, _ = overview([ln], docs)
        self.assertEqual(rows["ra select [dist=uniform,selectivity=0.5]"]["cupy"].text, f"{32.001 / 12.001:.3g}x")

    def test_never_and_every_size(self):
        slow = document("ra", "cuda", [ra_select("tuned", s, s / M * 2e-3, h2d=1e-3) for s in (1 * M, 32 * M)],
                        3000.0)
        [ln] = headline.lines(rows_of(self.cpu, slow))
        self.assertEqual(ln.break_even()[1], "never up to 32M")
        fast = document("ra", "cuda", [ra_select("tuned", s, s / M * 1e-5) for s in (32 * K, 32 * M)], 3000.0)
        [ln] = headline.lines(rows_of(self.cpu, fast))
        self.assertEqual(ln.break_even(), (32 * K, "every size from 32K"))

    def test_unverified_and_failed_results_do_not_count(self):
        cheat = document("ra", "cuda", [ra_select("tuned", 32 * M, 2e-9, checked=False),
                                        ra_select("paper", 32 * M, 2e-9, status="failed", reason="wrong answer"),
                                        ra_select("paper", 32 * M, 8e-3, h2d=1e-3)], 3000.0)
        [ln] = headline.lines(rows_of(self.cpu, cheat))
        self.assertEqual([r["variant"] for r in ln.per_backend["cuda"]], ["paper"])

    def test_a_figure_that_cannot_be_used_never_makes_a_speedup(self):
        """Issue 50, item 5: a negative, NaN, string or sub-nanosecond time at the headline's size is no
        best case (it gave a math domain error, 'nanx', a TypeError or a speed-up of the timer's): its
        case is left out of the rows (results.check_figures) and named."""
        for value, why in ((-8e-3, "negative"), (math.nan, "not finite"), ("8e-3", "not a number (a str)"),
                           (1e-12, "below the timer's resolution")):
            with self.subTest(value=value):
                bad = ra_select("tuned", 32 * M, 1e-3)
                bad["stats"]["kernel_s"]["median"] = value
                for t in bad["trials"]:
                    t["kernel_s"] = value
                gpu = document("ra", "cuda", [bad, ra_select("paper", 32 * M, 8e-3, h2d=1e-3)], 3000.0)
                [ln] = headline.lines(rows_of(self.cpu, gpu))
                self.assertEqual([r["variant"] for r in ln.per_backend["cuda"]], ["paper"])
                rows, _ = overview([ln], [self.cpu, gpu])
                texts = " ".join(f"{c.text} {c.note} {c.title}" for row in rows.values() for c in row.values()
                                 if hasattr(c, "text"))
                self.assertNotIn("nan", texts.lower())
                [line] = results.bad_figure_lines([gpu])
                self.assertIn("select/tuned[dist=uniform,selectivity=0.5]@32M: stats.kernel_s.median = "
                              f"{value!r}: {why}", line)

    def test_duckdb_column_and_summary(self):
        # DuckDB's answer materialised in DuckDB (sql_table, 48 ms) and transferred to NumPy (sql, 64 ms)
        sel = {"dist": "uniform", "selectivity": 0.5}
        duck = duckdb([("select", "sql_table", sel, 48e-3), ("select", "sql", sel, 64e-3)])
        docs = [self.cpu, self.gpu, duck]
        [ln] = headline.lines(rows_of(*docs))
        self.assertEqual(list(ln.per_backend), ["cpu", "cuda", "duckdb"])
        # The best of sql_table is compared, the best of sql beside it: never the best over both.
        self.assertEqual((ln.db_variant, ln.db_best["id"], ln.db_numpy_best["id"]),
                         ("sql_table", "select/sql_table[dist=uniform,selectivity=0.5,threads=2]@32M",
                          "select/sql[dist=uniform,selectivity=0.5,threads=2]@32M"))
        self.assertFalse(ln.db_fallback)
        self.assertAlmostEqual(ln.over_db(ln.cpu_best), 48.001 / 32.001)
        self.assertAlmostEqual(ln.over_db_numpy(ln.cpu_best), 64.001 / 32.001)
        self.assertEqual(ln.over_db_numpy_ci(ln.cpu_best).text(), with_ci(64.001 / 32.001))
        self.assertEqual(ln.contract, "equal work")
        cpu, gpu, db, db_numpy = details([ln], docs)
        self.assertEqual((cpu["vs duckdb"], cpu["duckdb variant"], cpu["vs duckdb (+NumPy)"], cpu["input contract"]),
                         (with_ci(48.001 / 32.001), "sql_table", with_ci(64.001 / 32.001), "equal work"))
        self.assertEqual((db["processor"], db["best with PCIe (case id)"], db["duckdb variant"]),
                         ("duckdb", "same", "sql_table"))
        self.assertEqual(db["best kernel-only (case id)"],
                         "select/sql_table[dist=uniform,selectivity=0.5,threads=2]@32M")
        self.assertEqual(db["speed-up with PCIe"], with_ci(32.001 / 48.001))
        self.assertEqual((db_numpy["processor"], db_numpy["duckdb variant"]), ("duckdb +NumPy", "sql"))
        self.assertEqual(db_numpy["best kernel-only (case id)"],
                         "select/sql[dist=uniform,selectivity=0.5,threads=2]@32M")
        self.assertEqual(db_numpy["speed-up with PCIe"], with_ci(32.001 / 64.001))
        rows, head = overview([ln], docs)
        self.assertEqual(list(head), ["operation", "size", "CPU", "cuda", "duckdb", "break-even size"])
        self.assertEqual(head["duckdb"].note, "(sql_table)")
        self.assertEqual(head["duckdb"].title.splitlines(), [
            "duckdb (peer)", "sql_table: DuckDB's answer materialised in DuckDB",
            "+NumPy (each cell's title): sql, DuckDB's answer transferred to NumPy"])
        row = rows[ln.name]
        # sql_table's speed-up, the best CPU's time over DuckDB's; sql's in the title (in the note it took
        # the overview past the page's width) and the details
        self.assertEqual(row["duckdb"].text, f"{32.001 / 48.001:.3g}x")
        self.assertEqual(row["duckdb"].note, brackets(32.001 / 48.001))
        self.assertIn("variant sql_table: DuckDB's answer materialised in DuckDB", row["duckdb"].title)
        self.assertIn("select/sql_table[dist=uniform,selectivity=0.5,threads=2]@32M", row["duckdb"].title)
        self.assertIn("+NumPy (sql): select/sql[dist=uniform,selectivity=0.5,threads=2]@32M, 64 ms, speed-up "
                      f"{with_ci(32.001 / 64.001)}", row["duckdb"].title)
        self.assertIn(f"vs duckdb (sql_table: DuckDB's answer materialised in DuckDB): {with_ci(48.001 / 32.001)}",
                      row["CPU"].title)
        self.assertIn(f"vs duckdb +NumPy (sql): {with_ci(64.001 / 32.001)}", row["CPU"].title)
        self.assertIn("input: equal work", row["CPU"].title)
        self.assertIn("duckdb: peer", headline.processor_note([ln], headline.processors(docs)))
        self.assertEqual(headline.db_column_note([ln]), (
            "In the duckdb column: DuckDB's answer materialised in DuckDB (`sql_table`) as a speed-up over the best "
            "CPU implementation; DuckDB's answer transferred to NumPy (`sql`) is in its title and in the details "
            "(+NumPy)."))
        sentences = headline.summary([ln], headline.processors(docs), docs)
        text = " ".join(sentences)
        # Both contracts, one sentence each: sql_table first
        self.assertIn("The suite's best CPU implementation is faster than duckdb on 1 of 1 operations duckdb ran "
                      "(DuckDB's answer materialised in DuckDB, `sql_table`; same data, same size, answers verified "
                      "alike); with the whole 95% confidence interval above 1, on 1.", sentences)
        self.assertIn("With DuckDB's answer transferred to NumPy (`sql`: the query and fetchnumpy()), faster on 1 of "
                      "1; with the whole interval above 1, on 1.", sentences)
        self.assertNotIn("equal work", text)  # a select: nothing to say
        self.assertIn("beats the best CPU implementation on 1 of 1 operations kernel-only and on 1 of 1 with its PCIe "
                      "transfers counted; with the whole 95% confidence interval of the speed-up above 1, on 1 and 1.",
                      text)
        self.assertIn("In brackets after each speed-up: its 95% confidence interval", text)

    def test_ssb_queries_are_rows_and_each_processor_has_a_geometric_mean(self):
        # Three SSB queries (no size sweep: size 0, their tables) on the CPU (serial, parallel) and
        # DuckDB (sql_table, sql; two thread counts, threads=1 slower); DuckDB ran only two of them.
        ssb = {"data": "generated", "sf": 1}

        def q(test, variant, s, params=ssb):
            return record(test, variant, 0, s, params=params, input_bytes=200 * M)
        cpu = document("ssb", "cpu", [q(t, v, s * f) for t, s in (("q1.1", 0.01), ("q2.1", 0.04), ("q4.3", 0.09))
                                      for v, f in (("parallel", 1), ("serial", 2))], 40.0)
        db = []
        for t, s in (("q1.1", 0.02), ("q2.1", 0.02)):
            for n, f in ((2, 1.0), (1, 1.5)):
                db += [q(t, "sql_table", s * f, dict(ssb, threads=n)), q(t, "sql", 2 * s * f, dict(ssb, threads=n))]
        duck = document("ssb", "cpu", db, 40.0)
        duck["backend"] = "duckdb"
        docs = [self.cpu, cpu, duck]
        ls = headline.lines(rows_of(*docs))
        self.assertEqual([ln.name for ln in ls], ["ra select [dist=uniform,selectivity=0.5]",
                                                  "ssb q1.1 [data=generated,sf=1]", "ssb q2.1 [data=generated,sf=1]",
                                                  "ssb q4.3 [data=generated,sf=1]"])
        rows, _ = overview(ls, docs)
        self.assertEqual(rows["ssb q1.1 [data=generated,sf=1]"]["size"].text, "its tables")
        self.assertEqual(rows["ssb q2.1 [data=generated,sf=1]"]["duckdb"].text, f"{0.04 / 0.02:.3g}x")
        self.assertEqual(rows["ssb q4.3 [data=generated,sf=1]"]["duckdb"].text, "-")
        header, geo = headline.geomean_table(ls, headline.processors(docs))
        self.assertEqual(header[:4], ["benchmark", "processor", "operations", "geometric mean ms"])
        by = {r[1]: r for r in geo}
        self.assertEqual(list(by), ["CPU", "duckdb", "duckdb +NumPy"])  # ra's operations are no workload
        self.assertEqual(by["CPU"][2:], ["3 of 3", f"{(0.01 * 0.04 * 0.09) ** (1 / 3) * 1e3:.4g}", "baseline"])
        # DuckDB's best (threads=2) per query it ran; its speed-up over the queries both ran
        self.assertEqual(by["duckdb"][2:], ["2 of 3", f"{0.02 * 1e3:.4g}", f"{(0.5 * 2) ** 0.5:.3g}x over 2"])
        self.assertEqual(by["duckdb +NumPy"][2:], ["2 of 3", f"{0.04 * 1e3:.4g}", f"{(0.25 * 1) ** 0.5:.3g}x over 2"])
        self.assertEqual(headline.geomean_table(headline.lines(rows_of(self.cpu)), headline.processors(docs))[1], [])

    def test_ssb_on_a_device_compares_the_tables_crossing_the_bus(self):
        # The device's resident=yes (tables already on it) is faster with PCIe than resident=no, but
        # the headline's device cell is resident=no's: the CPU's tables are in its memory, a device's
        # cross the bus. resident is no part of the operation: one row, CPU and opencl in it.
        ssb = {"data": "generated", "sf": 1}
        cpu = document("ssb", "cpu", [record("q1.1", "parallel", 0, 0.010, params=ssb, input_bytes=200 * M)], 40.0)
        ocl = document("ssb", "opencl", [
            record("q1.1", "fused", 0, 0.004, h2d_s=0.016, d2h_s=1e-6, params=dict(ssb, resident="no"),
                   transfer="pinned", input_bytes=200 * M),
            record("q1.1", "fused", 0, 0.004, d2h_s=1e-6, params=dict(ssb, resident="yes"), transfer="pinned",
                   input_bytes=200 * M)], 40.0)
        docs = [cpu, ocl]
        ls = headline.lines(rows_of(*docs))
        self.assertEqual([ln.name for ln in ls], ["ssb q1.1 [data=generated,sf=1]"])
        self.assertEqual(ls[0].acc, "opencl")
        self.assertEqual([r["params"]["resident"] for r in ls[0].per_backend["opencl"]], ["no"])
        rows, _ = overview(ls, docs)
        self.assertTrue(rows["ssb q1.1 [data=generated,sf=1]"]["opencl"].text.startswith("0.5x"),
                        rows["ssb q1.1 [data=generated,sf=1]"]["opencl"].text)

    def test_ssb_queries_are_not_counted_as_sizes_within_the_cache(self):
        # ssb's rows carry no size (size_bytes 0: whole tables): neither within the cache nor beyond it.
        ssb = {"data": "generated", "sf": 1}
        self.cpu["context"]["llc_bytes"] = 16 * M
        cpu = document("ssb", "cpu", [record("q1.1", "parallel", 0, 0.010, params=ssb, input_bytes=200 * M)], 40.0)
        ocl = document("ssb", "opencl", [record("q1.1", "fused", 0, 0.004, h2d_s=0.016, d2h_s=1e-6,
                                                params=dict(ssb, resident="no"), transfer="pinned",
                                                input_bytes=200 * M)], 40.0)
        docs = [self.cpu, self.gpu, cpu, ocl]
        text = " ".join(headline.summary(headline.lines(rows_of(*docs)), headline.processors(docs), docs))
        self.assertIn("1 of 1 operations at a size beyond the 16M last-level cache (memory-bound), the others "
                      "within it; 1 more (ssb) ran on whole tables at a scale factor, in neither count.", text)

    def test_a_run_without_sql_table_compares_sql_and_says_so(self):
        # A run from before sql_table was recorded: sql (the answer transferred to NumPy) only.
        duck = duckdb([("select", "sql", {"dist": "uniform", "selectivity": 0.5}, 64e-3)])
        docs = [self.cpu, self.gpu, duck]
        [ln] = headline.lines(rows_of(*docs))
        self.assertEqual((ln.db_variant, ln.db_fallback), ("sql", True))
        self.assertEqual(ln.db_best["id"], "select/sql[dist=uniform,selectivity=0.5,threads=2]@32M")
        self.assertIs(ln.db_best, ln.db_numpy_best)
        sentences = headline.summary([ln], headline.processors(docs), docs)
        self.assertIn("The suite's best CPU implementation is faster than duckdb on 1 of 1 operations duckdb ran, with "
                      "DuckDB's answer transferred to NumPy (`sql`: the query and fetchnumpy(); same data, same size, "
                      "answers verified alike); with the whole 95% confidence interval above 1, on 1.", sentences)
        self.assertIn("This run has no `sql_table` results (DuckDB's answer materialised in DuckDB, the equal-work "
                      "variant, which the peer records since issue 29): on duckdb's side the comparison includes the "
                      "transfer to NumPy.", sentences)
        self.assertFalse([s for s in sentences if s.startswith("With DuckDB's answer transferred")])  # said once
        rows, head = overview([ln], docs)
        self.assertEqual(head["duckdb"].note, "(sql)")
        self.assertEqual(head["duckdb"].title.splitlines(), [
            "duckdb (peer)", "(+NumPy) after a figure: sql only, DuckDB's answer transferred to NumPy"])
        self.assertEqual(rows[ln.name]["duckdb"].note, f"{brackets(32.001 / 64.001)} (+NumPy)")
        self.assertIn("variant sql: DuckDB's answer transferred to NumPy", rows[ln.name]["duckdb"].title)
        self.assertIn(f"vs duckdb (sql: DuckDB's answer transferred to NumPy): {with_ci(64.001 / 32.001)}",
                      rows[ln.name]["CPU"].title)
        self.assertNotIn("+NumPy (sql)", rows[ln.name]["CPU"].title)
        cpu, _, db = details([ln], docs)  # no second DuckDB row: sql is the one compared
        self.assertEqual((cpu["vs duckdb"], cpu["duckdb variant"], cpu["vs duckdb (+NumPy)"]),
                         (with_ci(64.001 / 32.001), "sql (no sql_table result)", "-"))
        self.assertEqual((db["processor"], db["duckdb variant"]), ("duckdb", "sql (no sql_table result)"))
        self.assertEqual(headline.db_column_note([ln]),
                         "In the duckdb column: '+NumPy' marks an operation with no `sql_table` result: its `sql` "
                         "figure, the transfer to NumPy included.")

    def test_sorted_input_operations_are_labelled_and_not_equal_work(self):
        # A run from before the param `input` (issue 29, item 1): the suite's join takes its input sorted
        # by key (its sort not timed), DuckDB's does not: the comparison says so per row and counts the
        # operations of equal work apart.
        sel = {"dist": "uniform", "selectivity": 0.5}
        cpu = document("ra", "cpu", self.cpu["results"] + [record("join", "parallel", 32 * M, 50e-3, params=JOIN)],
                       40.0)
        # DuckDB: faster than the CPU on select with its table (24 ms against 32), not with NumPy (64 ms)
        duck = duckdb([("select", "sql_table", sel, 24e-3), ("select", "sql", sel, 64e-3),
                       ("join", "sql_table", JOIN, 400e-3), ("join", "sql", JOIN, 600e-3)])
        docs = [cpu, self.gpu, duck]
        select, join = headline.lines(rows_of(*docs))
        self.assertEqual((select.test, select.sorted_input, select.contract), ("select", False, "equal work"))
        self.assertEqual((join.test, join.sorted_input, join.contract),
                         ("join", True, "sorted input (suite) vs unsorted (DuckDB)"))
        self.assertEqual((join.input_order, join.before_input_param), ("sorted", True))
        sentences = headline.summary([select, join], headline.processors(docs), docs)
        self.assertIn("The suite's best CPU implementation is faster than duckdb on 1 of 2 operations duckdb ran "
                      "(DuckDB's answer materialised in DuckDB, `sql_table`; same data, same size, answers verified "
                      "alike); with the whole 95% confidence interval above 1, on 1; on the 1 operation of equal "
                      "work, faster on 0 of 1 (0 with the whole interval above 1).", sentences)
        self.assertIn("With DuckDB's answer transferred to NumPy (`sql`: the query and fetchnumpy()), faster on 2 of "
                      "2; with the whole interval above 1, on 2; on the 1 operation of equal work, faster on 1 of 1 "
                      "(1 with the whole interval above 1).", sentences)
        self.assertIn("Not equal work on 1 of the 2 (join): the suite's side takes its input already sorted by key "
                      "(the RA paper's contract) and its time excludes that sort, while duckdb is handed the rows "
                      "without that contract and hashes or sorts them within its time ('sorted input (suite) vs "
                      "unsorted (DuckDB)' in the details, \u2020 in the overview); this run is from before the "
                      "suite's cases from unsorted input (issue 29, item 1), which are equal work.",
                      sentences)
        self.assertFalse([x for x in sentences if x.startswith(("From sorted input", "From unsorted input"))])
        # per row: the details' contract column, the overview's DuckDB cell and the titles
        contracts = {(d["operation"], d["processor"]): d["input contract"] for d in details([select, join], docs)}
        self.assertEqual(contracts, {
            (select.name, "CPU"): "equal work", (select.name, "cuda"): "equal work",
            (select.name, "duckdb"): "equal work", (select.name, "duckdb +NumPy"): "equal work",
            (join.name, "CPU"): "sorted input (suite) vs unsorted (DuckDB)",
            (join.name, "duckdb"): "sorted input (suite) vs unsorted (DuckDB)",
            (join.name, "duckdb +NumPy"): "sorted input (suite) vs unsorted (DuckDB)"})
        rows, _ = overview([select, join], docs)
        self.assertEqual(rows[join.name]["duckdb"].note,
                         f"{brackets(50.001 / 400.001)} \u2020")
        self.assertNotIn("\u2020", rows[select.name]["duckdb"].note)
        self.assertIn("input: sorted input (suite) vs unsorted (DuckDB)", rows[join.name]["CPU"].title)
        self.assertIn("input: sorted input (suite) vs unsorted (DuckDB)", rows[join.name]["duckdb"].title)
        self.assertTrue(headline.db_column_note([select, join]).endswith(
            "; \u2020 marks an operation the suite runs on input already sorted by key, that sort not timed, where "
            "DuckDB is handed the rows without that order: sorted input (suite) vs unsorted (DuckDB), not equal "
            "work."))
        # Without DuckDB the suite's contract is still named, no comparison
        [alone] = [ln for ln in headline.lines(rows_of(cpu)) if ln.test == "join"]
        self.assertEqual(alone.contract, "sorted input (its sort not timed)")
        self.assertEqual([d["input contract"] for d in details([alone], [cpu])], ["sorted input (its sort not timed)"])
        # every test of ra that takes sorted input
        self.assertEqual(headline.SORTED_INPUT_TESTS["ra"], ("unique", "reduce_by_key", "join", "set_union",
                                                             "set_intersection", "set_difference"))

    def test_unsorted_input_is_equal_work_and_sorted_input_is_labelled_apart(self):
        # issue 29, item 1: join from sorted input (input=sorted, declared last; its sort not timed) and
        # from unsorted input (input=unsorted: the suite's parallel variant sorts it first, its hash
        # variant runs on it); DuckDB is handed the same rows for each. Two operations, never one for
        # the other: only the unsorted one is equal work, and the sentences count it so.
        sel = {"dist": "uniform", "selectivity": 0.5}
        srt, uns = dict(JOIN, input="sorted"), dict(JOIN, input="unsorted")
        cpu = document("ra", "cpu", self.cpu["results"] + [
            record("join", "parallel", 32 * M, 50e-3, params=srt),
            record("join", "parallel", 32 * M, 120e-3, params=uns,
                   phases=(("input_sort", "sort", 0.6), ("join", "join", 0.4))),
            record("join", "hash", 32 * M, 80e-3, params=uns)], 40.0)
        # the accelerator ran join from sorted input only: more processors, yet no stand-in for the other
        gpu = document("ra", "cuda", self.gpu["results"] + [record("join", "tuned", 32 * M, 5e-3, params=srt)],
                       3000.0)
        # DuckDB: faster than the CPU on select (24 ms against 32) and on join from unsorted input with its
        # table (60 ms against the hash variant's 80), not with NumPy (100 ms); far slower from sorted input
        duck = duckdb([("select", "sql_table", sel, 24e-3), ("select", "sql", sel, 64e-3),
                       ("join", "sql_table", srt, 400e-3), ("join", "sql", srt, 600e-3),
                       ("join", "sql_table", uns, 60e-3), ("join", "sql", uns, 100e-3)])
        docs = [cpu, gpu, duck]
        ls = headline.lines(rows_of(*docs))
        select, join_s, join_u = ls
        self.assertEqual((join_s.name, join_u.name),
                         ("ra join [dist=uniform,match=0.5,fanout=1,input=sorted]",
                          "ra join [dist=uniform,match=0.5,fanout=1,input=unsorted]"))
        self.assertEqual((join_s.input_order, join_s.sorted_input, join_s.before_input_param, join_s.contract),
                         ("sorted", True, False, "sorted input, its sort not timed (DuckDB: the same rows, not known "
                                                 "sorted)"))
        self.assertEqual((join_u.input_order, join_u.sorted_input, join_u.contract),
                         ("unsorted", False, "equal work: unsorted input, its sort or hash timed (both sides)"))
        self.assertEqual((select.input_order, select.contract), ("", "equal work"))
        # The best CPU case from unsorted input, over every variant: the hash one
        self.assertEqual(join_u.cpu_best["id"], "join/hash[dist=uniform,match=0.5,fanout=1,input=unsorted]@32M")
        self.assertEqual(join_u.db_best["id"],
                         "join/sql_table[dist=uniform,match=0.5,fanout=1,input=unsorted,threads=2]@32M")
        self.assertEqual((list(join_s.per_backend), list(join_u.per_backend)),
                         (["cpu", "cuda", "duckdb"], ["cpu", "duckdb"]))
        sentences = headline.summary(ls, headline.processors(docs), docs)
        # over all 3 operations, and over the 2 of equal work (select, join from unsorted input)
        self.assertIn("The suite's best CPU implementation is faster than duckdb on 1 of 3 operations duckdb ran "
                      "(DuckDB's answer materialised in DuckDB, `sql_table`; same data, same size, answers verified "
                      "alike); with the whole 95% confidence interval above 1, on 1; on the 2 operations of equal "
                      "work, faster on 0 of 2 (0 with the whole interval above 1).", sentences)
        self.assertIn("With DuckDB's answer transferred to NumPy (`sql`: the query and fetchnumpy()), faster on 3 of "
                      "3; with the whole interval above 1, on 3; on the 2 operations of equal work, faster on 2 of 2 "
                      "(2 with the whole interval above 1).", sentences)
        self.assertIn("From sorted input (input=sorted), 1 of the 3 (join) are not equal work and not counted as "
                      "such: the suite's side takes its input already sorted (the RA paper's contract: by key, the "
                      "set operations by whole tuple) and its time excludes that sort, while duckdb is handed the "
                      "same rows without knowing their order and hashes or sorts them within its time ('sorted "
                      "input, its sort not timed (DuckDB: the same rows, not known sorted)' in the details, \u2020 "
                      "in the overview).", sentences)
        self.assertIn("From unsorted input (input=unsorted), 1 of the 3 (join) are equal work: both sides are handed "
                      "the same rows in random order, the suite's time includes sorting them (phase input_sort) or "
                      "its hash variant runs on them, and duckdb hashes or sorts them within its time ('equal work: "
                      "unsorted input, its sort or hash timed (both sides)' in the details).", sentences)
        self.assertFalse([x for x in sentences if x.startswith("Not equal work")])  # no run from before `input`
        contracts = {(d["operation"], d["processor"]): d["input contract"] for d in details(ls, docs)}
        self.assertEqual({k: v for k, v in contracts.items() if k[0] != select.name}, {
            (join_s.name, "CPU"): join_s.contract, (join_s.name, "cuda"): join_s.contract,
            (join_s.name, "duckdb"): join_s.contract, (join_s.name, "duckdb +NumPy"): join_s.contract,
            (join_u.name, "CPU"): join_u.contract, (join_u.name, "duckdb"): join_u.contract,
            (join_u.name, "duckdb +NumPy"): join_u.contract})
        rows, _ = overview(ls, docs)
        self.assertEqual(rows[join_s.name]["duckdb"].note, f"{brackets(50.001 / 400.001)} \u2020")
        self.assertEqual(rows[join_u.name]["duckdb"].note, brackets(80.001 / 60.001))  # no dagger
        self.assertEqual(rows[join_u.name]["operation"].note, "[input=unsorted]")  # what tells the two joins apart
        self.assertEqual(rows[join_u.name]["operation"].title, join_u.name)
        self.assertIn("input: equal work: unsorted input, its sort or hash timed (both sides)",
                      rows[join_u.name]["CPU"].title)
        self.assertIn("join/hash[dist=uniform,match=0.5,fanout=1,input=unsorted]@32M", rows[join_u.name]["CPU"].title)
        self.assertTrue(headline.db_column_note(ls).endswith(
            "; \u2020 marks an operation from sorted input (input=sorted), that sort not timed on the suite's side, "
            "where DuckDB is handed the same rows without knowing their order: sorted input, its sort not timed "
            "(DuckDB: the same rows, not known sorted), not equal work (from unsorted input, input=unsorted, it "
            "is)."))
        # Without DuckDB each still names the suite's contract
        alone = {ln.name: ln.contract for ln in headline.lines(rows_of(cpu)) if ln.test == "join"}
        self.assertEqual(alone, {join_s.name: "sorted input (its sort not timed)",
                                 join_u.name: "unsorted input (its sort or hash timed)"})
        # DuckDB from sorted input only (a run with --inputs sorted): nothing of equal work on join
        only_sorted = duckdb([("select", "sql_table", sel, 24e-3), ("join", "sql_table", srt, 400e-3)])
        ls = headline.lines(rows_of(cpu, only_sorted))
        self.assertEqual([(ln.test, ln.input_order, ln.contract) for ln in ls],
                         [("select", "", "equal work"), ("join", "sorted", join_s.contract),
                          ("join", "unsorted", "unsorted input (its sort or hash timed)")])
        sentences = headline.summary(ls, headline.processors([cpu, only_sorted]), [cpu, only_sorted])
        self.assertIn("The suite's best CPU implementation is faster than duckdb on 1 of 2 operations duckdb ran "
                      "(DuckDB's answer materialised in DuckDB, `sql_table`; same data, same size, answers verified "
                      "alike); with the whole 95% confidence interval above 1, on 1; on the 1 operation of equal "
                      "work, faster on 0 of 1 (0 with the whole interval above 1).", sentences)
        self.assertFalse([x for x in sentences if x.startswith("From unsorted input")])

    def test_an_operation_without_sql_table_counts_with_numpy_only(self):
        sel = {"dist": "uniform", "selectivity": 0.5}
        cpu = document("ra", "cpu", self.cpu["results"] + [record("join", "parallel", 32 * M, 50e-3, params=JOIN)],
                       40.0)
        duck = duckdb([("select", "sql_table", sel, 48e-3), ("select", "sql", sel, 64e-3), ("join", "sql", JOIN, 6e-1)])
        docs = [cpu, duck]
        ls = headline.lines(rows_of(*docs))
        sentences = headline.summary(ls, headline.processors(docs), docs)
        self.assertIn("The suite's best CPU implementation is faster than duckdb on 1 of 1 operations duckdb ran "
                      "(DuckDB's answer materialised in DuckDB, `sql_table`; same data, same size, answers verified "
                      "alike); with the whole 95% confidence interval above 1, on 1.", sentences)
        self.assertIn("With DuckDB's answer transferred to NumPy (`sql`: the query and fetchnumpy()), faster on 2 of "
                      "2; with the whole interval above 1, on 2; on the 1 operation of equal work, faster on 1 of 1 "
                      "(1 with the whole interval above 1).", sentences)
        self.assertIn("duckdb ran ra join [dist=uniform,match=0.5,fanout=1] without `sql_table`: that operation is "
                      "counted with NumPy only.", sentences)
        rows, head = overview(ls, docs)
        self.assertEqual(head["duckdb"].note, "(sql_table/sql)")

    def test_compared_beyond_the_caches_even_where_a_peer_did_not_run(self):
        big = 256 * M
        cpu = document("ra", "cpu", self.cpu["results"] + [ra_select("parallel", big, big / M * 1e-3)], 40.0)
        gpu = document("ra", "cuda", self.gpu["results"] + [ra_select("tuned", big, big / M * 2e-4, h2d=2e-3)],
                       3000.0)
        duck = document("ra", "cpu", [ra_select("sql", 32 * M, 64e-3)], 40.0)
        duck["backend"] = "duckdb"
        docs = [cpu, gpu, duck]
        [ln] = headline.lines(rows_of(*docs))
        self.assertEqual(ln.size, big)  # not 32M, where the most processors (DuckDB too) ran
        rows, head = overview([ln], docs)
        self.assertEqual([head[b].title for b in ("CPU", "cuda")],
                         ["CPU (fixture CPU, ? threads)", "cuda: fixture GPU"])
        self.assertNotIn("duckdb", head)
        self.assertEqual(rows[ln.name]["size"].text, "256M")
        self.assertEqual([r["processor"] for r in details([ln], docs)], ["CPU", "cuda"])
        self.assertEqual(details([ln], docs)[1]["vs duckdb"], "-")

    def test_opencl_on_a_cpu_stands_in_and_says_so(self):
        ocl = document("ra", "opencl", [ra_select("paper", 32 * M, 0.1, h2d=1e-3)], 40.0)
        ocl["context"]["device"]["type"] = "cpu"
        docs = [self.cpu, ocl]
        ls = headline.lines(rows_of(*docs))
        self.assertEqual(ls[0].acc, "opencl")
        text = " ".join(headline.summary(ls, headline.processors(docs), docs))
        self.assertIn("No GPU ran here: the OpenCL backend on fixture OpenCL device (a cpu device) stands in", text)
        self.assertIn("beats the best CPU implementation on 0 of 1", text)
        both = headline.summary(headline.lines(rows_of(self.cpu, ocl, self.gpu)), headline.processors(
            [self.cpu, ocl, self.gpu]), docs)
        self.assertFalse(any("stands in" in s for s in both))

    def test_the_parameters_most_processors_ran(self):
        other = [record("select", "parallel", 32 * M, 1e-3, params={"dist": "zipf", "selectivity": 0.5})]
        cpu = document("ra", "cpu", self.cpu["results"] + other, 40.0)
        [ln] = headline.lines(rows_of(cpu, self.gpu))
        self.assertEqual(ln.name, "ra select [dist=uniform,selectivity=0.5]")

    def test_memory_bound_sizes_are_counted_against_the_llc(self):
        self.cpu["context"]["llc_bytes"] = 16 * M
        docs = [self.cpu, self.gpu]
        text = " ".join(headline.summary(headline.lines(rows_of(*docs)), headline.processors(docs), docs))
        self.assertIn("1 of 1 operations at a size beyond the 16M last-level cache", text)
        # an empty record (a configuration without [beyond_caches]) or one edited out of shape: the same
        for record_ in ({}, {"benchmarks": {"ra": {"cache": {"bytes": 480 * M}}}}):
            sentences = headline.summary(headline.lines(rows_of(*docs)), headline.processors(docs), docs, record_)
            self.assertIn("Compared at the largest size the CPU and the accelerator both ran: 1 of 1 operations at a "
                          "size beyond the 16M last-level cache (memory-bound), the others within it.", sentences)
            self.assertFalse([s for s in sentences if s.startswith("The largest sizes")])

    def test_sizes_are_counted_against_the_caches_the_run_was_sized_for(self):
        """run.json's beyond_caches (caches.fit's record): its largest cache of the headline's benchmarks,
        not context.llc_bytes, and its note as the next sentence."""
        self.cpu["context"]["llc_bytes"] = 16 * M  # one instance's, as the executables read it
        docs = [self.cpu, self.gpu]
        ls = headline.lines(rows_of(*docs))
        default = config.load(config.resolve_config_path(REPO, "default"))
        _, rec = caches.fit(default, caches.Machine({"bytes": 480 * M, "source": "fixture"}, [], 256 << 30))
        sentences = headline.summary(ls, headline.processors(docs), docs, rec)
        i = sentences.index("Compared at the largest size the CPU and the accelerator both ran: 0 of 1 operations at "
                            "a size beyond the 480M LLC (memory-bound), the others within it.")
        self.assertEqual(sentences[i + 1],
                         "The largest sizes follow this machine's caches: at least 2x the 480M LLC (960M).")
        # only the headline's benchmarks count: a GPU's 24M L2 sized ra, a 480M LLC tpch (not in it); each
        # processor against its own cache: the CPU's side against the documents' 16M LLC, cuda's the L2
        rec = {"factor": 2, "benchmarks": {
            "ra": {"cache": {"what": "cuda L2", "bytes": 24 * M}, "largest": 64 * M, "reached": True},
            "tpch": {"cache": {"what": "LLC", "bytes": 480 * M}, "largest": 512 * M, "reached": False,
                     "limits": ["memory"]}}}
        sentences = headline.summary(ls, headline.processors(docs), docs, rec)
        self.assertIn("Compared at the largest size the CPU and the accelerator both ran: 1 of 1 operations at a size "
                      "beyond the CPU's 16M last-level cache and 1 of 1 beyond the 24M cuda L2 (memory-bound), the "
                      "others within them.", sentences)
        self.assertIn("The largest sizes follow this machine's caches: at least 2x the 24M cuda L2 (48M).", sentences)
        # the device's own L2 in its documents wins over the record's: 60M, the 32M operation within it
        self.gpu["context"]["device"]["l2_cache_bytes"] = 60 * M
        sentences = headline.summary(ls, headline.processors(docs), docs, rec)
        self.assertIn("Compared at the largest size the CPU and the accelerator both ran: 1 of 1 operations at a size "
                      "beyond the CPU's 16M last-level cache and 0 of 1 beyond the 60M cuda L2 (memory-bound), the "
                      "others within them.", sentences)
        del self.gpu["context"]["device"]["l2_cache_bytes"]
        # short of the caches: said
        rec["benchmarks"]["ra"].update(cache={"what": "LLC", "bytes": 480 * M}, largest=512 * M, reached=False,
                                       limits=["time"])
        sentences = headline.summary(ls, headline.processors(docs), docs, rec)
        self.assertEqual(sentences[-2:], [
            "Compared at the largest size the CPU and the accelerator both ran: 0 of 1 operations at a size beyond "
            "the 480M LLC (memory-bound), the others within it.",
            "The largest sizes stop short of 2x the caches for ra (512M < 2x the 480M LLC: time)."])


class Intervals(unittest.TestCase):
    """headline.ratio_ci and Speedup: the interval of a ratio of medians from the trials of both sides."""

    def test_the_interval_holds_the_speedup_and_is_reproducible(self):
        rng = np.random.default_rng(1)
        cpu, acc = lognormal(10e-3, 0.05, 20, rng), lognormal(2e-3, 0.05, 15, rng)
        point = float(np.median(cpu) / np.median(acc))
        lo, hi = headline.ratio_ci(cpu, acc)
        self.assertLess(lo, point)
        self.assertLess(point, hi)
        self.assertLess(hi / lo, 1.2)  # 5% noise, 20 and 15 trials: a few per cent either way
        headline.ratio_ci.cache_clear()  # computed anew, not remembered: the seed makes it the same
        self.assertEqual(headline.ratio_ci(cpu, acc), (lo, hi))
        # Noisier trials, a wider interval.
        noisy = lognormal(10e-3, 0.3, 20, rng)
        nlo, nhi = headline.ratio_ci(noisy, acc)
        self.assertGreater(nhi / nlo, hi / lo)

    def test_three_trials_give_the_range_of_the_extreme_ratios(self):
        lo, hi = headline.ratio_ci((1.0, 1.02, 0.99), (0.2, 0.21, 0.19))
        self.assertAlmostEqual(lo, 0.99 / 0.21)
        self.assertAlmostEqual(hi, 1.02 / 0.19)

    def test_the_interval_covers_the_true_ratio(self):
        # 100 pairs of samples, 10 trials each, true ratio of medians 5: the 95% interval should hold it
        # nearly always (the percentile bootstrap is approximate: at least 90 of 100 here).
        rng = np.random.default_rng(7)
        held = 0
        for _ in range(100):
            lo, hi = headline.ratio_ci(lognormal(10.0, 0.05, 10, rng), lognormal(2.0, 0.05, 10, rng))
            held += lo <= 5.0 <= hi
        self.assertGreaterEqual(held, 90)

    def test_fewer_than_three_trials_have_no_interval(self):
        self.assertIsNone(headline.ratio_ci((1.0, 1.1), (0.5, 0.5, 0.5)))
        cpu = ra_select("parallel", 32 * M, 32e-3)
        gpu = ra_select("tuned", 32 * M, 8e-3)
        gpu["trials"] = gpu["trials"][:2]
        [c, g] = rows_of(document("ra", "cpu", [cpu], 40.0), document("ra", "cuda", [gpu], 3000.0))
        s = headline.Speedup.of(c, g, "kernel_median_s")
        self.assertIsNone(s.ci)
        self.assertEqual(s.n, (3, 2))
        self.assertEqual(s.text(), "4x (95% CI not available: 3 and 2 trials)")
        self.assertEqual(s.brackets(), "")  # the sentence above the overview says why, not every cell
        self.assertFalse(s.above_one)
        [ln] = headline.lines([c, g])
        rows, _ = overview([ln], [])
        self.assertEqual(str(rows[ln.name]["cuda"]), "4x")
        self.assertIn("4x (95% CI not available: 3 and 2 trials)", rows[ln.name]["cuda"].title)

    def test_a_speedup_whose_interval_reaches_below_one_is_not_counted_as_sure(self):
        # The accelerator is 1% faster by the medians, but its passes spread 10%: not shown faster.
        rng = np.random.default_rng(3)
        cpu, gpu = ra_select("parallel", 32 * M, 10e-3), ra_select("tuned", 32 * M, 9.9e-3)
        for r, times in ((cpu, lognormal(10e-3, 0.1, 9, rng)), (gpu, lognormal(9.9e-3, 0.1, 9, rng))):
            r["trials"] = [{"h2d_s": 0.0, "kernel_s": t, "d2h_s": 0.0, "total_s": t, "phases_s": {}} for t in times]
            r["stats"]["kernel_s"] = r["stats"]["total_s"] = stats(times)
        docs = [document("ra", "cpu", [cpu], 40.0), document("ra", "cuda", [gpu], 3000.0)]
        [ln] = headline.lines(rows_of(*docs))
        s = ln.acc_speedup_ci("total_median_s")
        self.assertLess(s.ci[0], 1)
        self.assertGreater(s.ci[1], 1)
        text = " ".join(headline.summary([ln], headline.processors(docs), docs))
        beats = 1 if ln.acc_speedup("total_median_s") > 1 else 0
        self.assertIn(f"on {beats} of 1 operations kernel-only and on {beats} of 1 with its PCIe transfers counted; "
                      "with the whole 95% confidence interval of the speed-up above 1, on 0 and 0.", text)


class TextPeer(unittest.TestCase):
    def test_pg_trgm_is_compared_per_query_with_the_fastest_cpu_search(self):
        def search(backend, variant, q, params, extra=None, **kw):
            r = record("search", variant, 2 * M, q * 100, params=params, **kw)
            r["extra"] = dict(extra or {}, query_median_s=q)
            return r
        cpu = document("ngram", "cpu", [search("cpu", "baseline", 4e-5, {"k": 0}),
                                        search("cpu", "binned", 1e-5, {"k": 0}),
                                        search("cpu", "binned", 2e-5, {"k": 6})], 40.0)
        pg = document("ngram", "cpu", [
            search("pg_trgm", "word_similarity", 2e-2, {"k": 0, "threshold": 0.6},
                   {"mean_hits_per_query": 38.7, "nsearch_mean_hits_per_query": 16.9, "jaccard_mean": 0.62,
                    "share_of_nsearch_hits_found": 1.0}),
            search("pg_trgm", "word_similarity", 2e-9, {"k": 0, "threshold": 0.8}, checked=False)], 40.0)
        pg["backend"] = "pg_trgm"
        header, table = headline.text_peer_table(rows_of(cpu, pg))
        self.assertEqual(len(table), 1, table)  # the unverified case is not shown
        row = dict(zip(header, table[0], strict=True))
        self.assertEqual(row["pg_trgm ms/query"], "20")
        self.assertEqual(row["nsearch ms/query (case id)"], "0.01 (search/binned[k=0]@2M)")
        self.assertEqual(row["nsearch faster by"], "2e+03x")
        self.assertEqual(row["Jaccard"], "0.62")
        self.assertEqual(row["nsearch hits pg_trgm found"], "100%")


class BusyMachine(TempDirCase):
    def test_results_taken_on_a_busy_machine_are_flagged(self):
        from hdb import report
        run = self.copy_fixture()
        path = Path(run, "raw", "ra-cpu.json")
        d = json.loads(path.read_text())
        idle = {"loadavg": [0.1, 0.2, 0.3], "running": 1, "window_s": 0.15, "other_busy_processes": [],
                "other_cores": 0.0, "busy": False}
        d["context"]["load"] = {"before": dict(idle, busy=True, other_cores=0.98, other_busy_processes=[
            {"pid": 7, "name": "cc1plus", "cores": 0.98}]), "after": idle}
        path.write_text(json.dumps(d))
        docs = results.load_docs(run)
        self.assertEqual(report.busy_runs(docs), ["ra-cpu.json: before: 0.98 cores in other processes (cc1plus 0.98)"])
        p = script("report", run, env=NO_FIGURES)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        md = Path(run, "report.md").read_text()
        self.assertIn("1 of ", md)
        self.assertIn("taken on a busy machine", md)
        self.assertIn("- ra-cpu.json: before: 0.98 cores in other processes (cc1plus 0.98)", md)


class ReportHeadline(TempDirCase):
    def test_report_opens_with_the_headline(self):
        run = self.copy_fixture()
        # the sizes beyond the caches the run recorded (caches.fit): the report reads them from run.json
        manifest = json.loads(Path(run, "run.json").read_text())
        manifest["beyond_caches"] = {"factor": 2, "max_size": 1 << 30, "benchmarks": {
            "ra": {"cache": {"what": "LLC", "bytes": 16 * M}, "configured": 32 * M, "largest": 32 * M,
                   "reached": True},
            "tpch": {"cache": {"what": "LLC", "bytes": 16 * M}, "configured": 32 * M, "largest": 32 * M,
                     "reached": True},
            "merge": {"cache": {"what": "cuda L2", "bytes": 48 * M}, "configured": 32 * M, "largest": 32 * M,
                      "reached": False, "limits": ["time"]}}}
        Path(run, "run.json").write_text(json.dumps(manifest))
        p = script("report", run)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        md = Path(run, "report.md").read_text()
        head = md.index("## Headline: does the accelerator pay off?")
        self.assertLess(head, md.index("## Executables") if "## Executables" in md else md.index("| host |"))
        # The overview (one row per operation, a column per processor), then the details with the case ids.
        overview = md.index("| operation | size | CPU (baseline) | cuda | break-even size (cuda) |")
        self.assertLess(head, overview)
        # Only the parameters that tell rows of one test apart: TPC-H's data source, not ra select's.
        self.assertIn("| ra select | 32M | 18.64 ms | 8.82x [8.56-9.09] (kernel 153x) | "
                      "every size from 32K |", md)
        self.assertIn("| tpch A [data=tpch,sf=0.1] | its tables |", md)
        self.assertIn("Processors: CPU: fixture CPU, ? threads; cuda: fixture GPU.", md)
        # The fixture's TPC-H rows on whole tables (no size) are in neither count: 10 sized of the 13. Each
        # processor against its own cache: the CPU's sides against the LLC, cuda's against the L2 (issue 46).
        self.assertIn("Compared at the largest size the CPU and the accelerator both ran: 8 of 10 operations at a size "
                      "beyond the CPU's 16M LLC and 0 of 10 beyond the 48M cuda L2 (memory-bound), the others within "
                      "them; 3 more (tpch) ran on whole tables at a scale factor, in neither count.", md)
        self.assertIn("The largest sizes stop short of 2x the caches for merge (32M < 2x the 48M cuda L2: time).", md)
        details = md.index("| operation | processor | best kernel-only (case id) | kernel ms |")
        self.assertLess(overview, details)
        self.assertLess(details, md.index("## Machine\n"))  # the machine's tables under a heading of their own
        self.assertIn("| ra select [dist=uniform,selectivity=0.5] | cuda | "
                      "select/thrust[dist=uniform,selectivity=0.5,transfer=pinned]@32M | 0.1218 | same | 2.113 | "
                      "8.82x (95% CI 8.56-9.09) | 153x (95% CI 149-158) | - |", md)
        page = Path(run, "report.html").read_text()
        top = page.index('<h2 id="headline-does-the-accelerator-pay-off">Headline: does the accelerator pay off?</h2>')
        # The verdict and the table of contents come before it, the run's command folded after them.
        verdict = page.index('<h2 id="verdict">Verdict</h2>')
        self.assertLess(verdict, page.index('<table class="verdict">'))
        self.assertLess(page.index('<table class="verdict">'), page.index('<nav class="toc"'))
        self.assertLess(page.index('<nav class="toc"'), page.index("<summary>Run: configuration &#39;fixture&#39;"))
        self.assertLess(page.index("<summary>Run: configuration &#39;fixture&#39;"), top)
        self.assertIn('<li><a href="#headline-does-the-accelerator-pay-off">', page)
        # The overview is the section's first table; the processor's full name and the case ids on hover.
        self.assertEqual(page.index("<table", top), page.index('<table class="headline">', top))
        self.assertIn('<th class="n" title="CPU (fixture CPU, ? threads)">CPU <span class="note">(baseline)</span>'
                      '</th>', page)
        self.assertIn('<th class="n" title="cuda: fixture GPU">cuda</th>', page)
        self.assertIn("best kernel-only: select/thrust[dist=uniform,selectivity=0.5,transfer=pinned]@32M, 0.1218 ms",
                      page)
        self.assertLess(top, page.index("<details>\n<summary>Case ids and times per operation and processor"))
        if not has_matplotlib():
            self.skipTest("matplotlib is not available: the figure is not checked")
        self.assertIn("plots/headline.png", md)
        self.assertLess(head, md.index("plots/headline.png"))  # the figure first
        self.assertLess(md.index("plots/headline.png"), overview)
        self.assertLess(top, page.index('<img alt="headline: speed-up over the best CPU implementation"'))
        self.assertLess(page.index('<img alt="headline:'), page.index('<table class="headline">'))
        self.assertTrue(Path(run, "plots", "headline.png").stat().st_size > 1000)


if __name__ == "__main__":
    unittest.main()
