"""The pg_trgm peer (scripts/hdb/peers/pg_trgm.py, docs/peers.md "pg_trgm"), CTest label `peers`:

- hdb-export-ngram writes the n-gram benchmark's own data: its queries and nsearch hits equal
  hdb-ngram-cpu --output's for the same options and seed, its documents are the normalized corpus;
- word_similarity() (the peer's re-implementation) gives PostgreSQL's documented examples;
- a run on a tiny corpus: the cluster starts, every search case is verified (index answer ==
  sequential scan, sampled rows recomputed), overlap with nsearch is recorded, the document and CSV
  pass tests/check_results.py, and no server process or temporary folder is left;
- SIGTERM and SIGINT in the middle of a run: exit 128+N, the document says interrupted, nothing left;
  kill -9 of the peer: its server ends by itself, and the next run removes the folder;
- without PostgreSQL the peer is skipped with the reason (exit 77).

Run: HDB_BUILD_DIR=build-pg python3 tests/peers/test_pg_trgm_peer.py"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts"))

from hdb.peers import pg_trgm  # noqa: E402

BUILD = os.path.abspath(os.environ.get("HDB_BUILD_DIR", os.path.join(REPO, "build")))
EXPORT = os.path.join(BUILD, "tools", "hdb-export-ngram")
NGRAM_CPU = os.path.join(BUILD, "bin", "hdb-ngram-cpu")
HAVE_PG, WHY_NOT = pg_trgm.available()
SMALL = ["--corpus", "synthetic", "--sizes", "100,64K", "--pg-errors", "0", "--thresholds", "0.3,0.6",
         "--pg-query-count", "4", "--passes", "1", "--warmup", "0", "--max-time", "0"]


def postgres_pids(under=None):
    """Processes named postgres; with `under`, only the servers whose command line names a folder
    below it (this test's own: other clusters may run on the machine at the same time)."""
    out = set()
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/comm") as f:
                    if f.read().strip() != "postgres":
                        continue
                with open(f"/proc/{p}/cmdline", "rb") as f:
                    cmd = f.read()
                if under is None or under.encode() in cmd:
                    out.add(int(p))
            except OSError:
                pass
    return out


def orphans():
    """postgres processes whose server is gone (adopted by init)."""
    out = set()
    for p in postgres_pids():
        try:
            with open(f"/proc/{p}/stat") as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == 1:
                    out.add(p)
        except (OSError, ValueError, IndexError):
            pass
    return out


def peer_argv(tmp, *extra):
    return [sys.executable, "-m", "hdb.peers.pg_trgm", "ngram", "--build-dir", BUILD,
            "--json", os.path.join(tmp, "pg.json"), "--csv", os.path.join(tmp, "pg.csv"),
            "--tmp-root", os.path.join(tmp, "root")] + list(extra)


def peer_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(REPO, "scripts") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


@unittest.skipUnless(os.access(EXPORT, os.X_OK) and os.access(NGRAM_CPU, os.X_OK),
                     f"hdb-export-ngram and hdb-ngram-cpu are not built in {BUILD}")
class Export(unittest.TestCase):
    def test_same_queries_and_hits_as_the_benchmark(self):
        with tempfile.TemporaryDirectory() as tmp:
            common = ["--corpus", "synthetic", "--seed", "9", "--errors", "0,3", "--query-count", "12"]
            ex = os.path.join(tmp, "e.jsonl")
            subprocess.run([EXPORT, "--size", "256K", "--out", ex] + common, check=True, timeout=120)
            tsv = os.path.join(tmp, "hits.tsv")
            subprocess.run([NGRAM_CPU, "--sizes", "256K", "--only", "search/baseline", "--passes", "1",
                            "--output", tsv] + common, check=True, timeout=120, capture_output=True)
            header, docs, queries = pg_trgm.read_export(ex)
            self.assertEqual(header["size_bytes"], 256 * 1024)
            self.assertEqual(header["articles"], len(docs))
            for d in docs:  # the stored, normalized text: what nsearch indexes
                self.assertRegex(d, r"^ [a-z0-9]+( [a-z0-9]+)* $")
            want = {}
            with open(tsv) as f:
                for line in f:
                    if not line.startswith("#"):
                        _, k, j, q, ids = line.rstrip("\n").split("\t")
                        want[(int(k), int(j))] = (q, [int(x) for x in ids.split()])
            got = {(k, qi["query"]): (qi["text"], qi["hits"]) for k, qs in queries.items() for qi in qs}
            self.assertEqual(got, want)
            self.assertEqual(len(got), 24)
            self.assertTrue(any(h for _, h in got.values()))

    def test_bad_size_is_a_usage_error(self):
        p = subprocess.run([EXPORT, "--size", "12Q"], capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--size", p.stderr)


class WordSimilarity(unittest.TestCase):
    def test_documented_examples(self):
        # PostgreSQL's documentation: word_similarity('word', 'two words') = 0.8.
        self.assertEqual(pg_trgm.word_similarity("word", "two words"), pg_trgm._f32(0.8))
        self.assertEqual(pg_trgm.trigrams_in_order("foo|bar"), ["  f", " fo", "foo", "oo ", "  b", " ba", "bar", "ar "])
        self.assertEqual(pg_trgm.word_similarity("word", "word"), 1.0)
        self.assertEqual(pg_trgm.word_similarity("xyz", "two words"), 0.0)

    def test_command_budgets_by_the_time_limit(self):
        from hdb import peers
        job = peers.PeerJob(peer="pg_trgm", benchmark="ngram", python="/usr/bin/python3", repo=REPO, build_dir=BUILD,
                            json="x.json", csv="x.csv", args=["--sizes", "1M"], timeout_s=600)
        argv = pg_trgm.command(job)
        self.assertEqual(argv[:4], ["/usr/bin/python3", "-m", "hdb.peers.pg_trgm", "ngram"])
        self.assertEqual(argv[argv.index("--pg-budget") + 1], "450")
        self.assertEqual(argv[-2:], ["--sizes", "1M"])

    def test_ids_as_the_case_model(self):
        """The peer hands over typed params and the size; the id is hdb.contract's (case.cpp's rules)."""
        from hdb import contract
        from hdb.peers import record
        with tempfile.TemporaryDirectory() as d:
            doc = record.Document("ngram", "pg_trgm", {}, os.path.join(d, "x.json"))
            params = {"k": 0, "threshold": 0.6}
            r = doc.ok(pg_trgm._case("search", "word_similarity", params, 1 << 20, 3, 100), "search",
                       "word_similarity", params, contract.Passes([0.1, 0.2]), True, True, "checked")
            self.assertEqual(r["id"], "search/word_similarity[k=0,threshold=0.6]@1M")
            self.assertEqual((r["params"], r["size_label"]), (params, "2^20"))
            r = doc.skipped(pg_trgm._case("index", "build", {}, 32 * 1024, 0, 0), "index", "build", {}, "budget")
            self.assertEqual(r["id"], "index/build@32K")


class Verification(unittest.TestCase):
    """The bookkeeping of the checks, without a server."""

    @staticmethod
    def measured(*verdicts):
        # (case, params, times, verified by (a), detail, extra) per threshold; None: no answer at all.
        out = []
        for t, v in verdicts:
            out.append(({"id": f"t{t}"}, {"k": 0, "threshold": t}, None if v is None else [0.1], bool(v),
                        "(a) " + ("ok" if v else "failed"), {}))
        return out

    def test_a_failed_case_does_not_skip_the_sample_check_of_the_others(self):
        asked = []

        def check(thresholds):
            asked.append(thresholds)
            return True, "", 12
        got = pg_trgm.verify_sample(self.measured((0.3, True), (0.6, False), (0.8, True), (0.9, None)), 4, check)
        self.assertEqual(asked, [[0.3, 0.8]])  # the thresholds whose answers passed (a)
        ok = {p["threshold"]: (v, d) for _, p, _, v, d, _ in got}
        self.assertTrue(ok[0.3][0] and ok[0.8][0])
        self.assertIn("recomputed", ok[0.3][1])
        self.assertIn("for 12 sampled rows", ok[0.8][1])
        self.assertEqual(ok[0.6], (False, "(a) failed"))
        self.assertEqual(ok[0.9], (False, "(a) failed"))

    def test_a_failed_sample_fails_every_case_it_covered(self):
        got = pg_trgm.verify_sample(self.measured((0.3, True), (0.6, True)), 4,
                                    lambda ts: (False, "article 3 differs", 1))
        self.assertEqual([v for _, _, _, v, _, _ in got], [False, False])
        self.assertIn("article 3 differs", got[0][4])

    def test_an_empty_sample_says_so(self):
        got = pg_trgm.verify_sample(self.measured((0.6, True)), 4, lambda ts: (True, "", 0))
        self.assertTrue(got[0][3])
        self.assertIn("recomputed for no row", got[0][4])
        self.assertNotIn("equal to PostgreSQL's", got[0][4])

    def test_threads_reach_the_server(self):
        """--threads (else every core) bounds a query's processes: leader + threads - 1 parallel
        workers. The server ran with PostgreSQL's default of 2 workers per query whatever --threads
        said, while the context recorded 1 thread."""
        from hdb.peers import record
        self.assertEqual(pg_trgm.query_threads(record.Harness(threads=3)), 3)
        self.assertEqual(pg_trgm.query_threads(record.Harness(threads=0)), os.cpu_count())
        for threads, workers in ((1, "0"), (2, "1"), (16, "15")):
            s = pg_trgm.server_settings(threads)
            self.assertEqual((s["max_parallel_workers_per_gather"], s["max_parallel_workers"]), (workers, workers))
            self.assertGreaterEqual(int(s["max_worker_processes"]), int(workers))
        self.assertEqual(pg_trgm.SERVER_SETTINGS.get("max_parallel_workers_per_gather"), None)

    def test_a_size_that_fails_records_each_of_its_cases_once(self):
        from hdb import contract
        from hdb.peers import record
        a = pg_trgm.parse_args(["ngram", "--json", "x.json", "--build-dir", BUILD, "--sizes", "1K",
                                "--pg-errors", "0,6", "--thresholds", "0.5,0.8"])
        with tempfile.TemporaryDirectory() as d:
            doc = record.Document("ngram", "pg_trgm", record.context(REPO, a.harness, "pg", 1),
                                  os.path.join(d, "x.json"))
            build = pg_trgm._case("index", "build", {}, 1024, 1, 1)
            doc.ok(build, "index", "build", {}, contract.Passes([0.1]), True, True, "built")
            pg_trgm.record_rest_of_size(doc, a, 1024, "failed", "psql: the server went away")
            ids = [r["id"] for r in doc.doc["results"]]
            self.assertEqual(len(ids), 5)
            self.assertEqual(len(set(ids)), 5)
            self.assertEqual(doc.doc["summary"], {"ok": 1, "skipped": 0, "failed": 4})
            self.assertIn("search/word_similarity[k=6,threshold=0.8]@1K", ids)
            self.assertTrue(all(r["reason"] == "psql: the server went away" for r in doc.doc["results"][1:]))


@unittest.skipUnless(os.access(EXPORT, os.X_OK), f"hdb-export-ngram is not built in {BUILD}")
class Peer(unittest.TestCase):
    def setUp(self):
        if not HAVE_PG:
            self.skipTest(f"PostgreSQL absent: {WHY_NOT}")
        self.before = orphans()
        self.tmp = tempfile.mkdtemp(prefix="hdb-pg-test-")
        os.chmod(self.tmp, 0o755)  # as root the server runs as 'postgres', which must reach root/
        os.mkdir(os.path.join(self.tmp, "root"))

    def tearDown(self):
        import shutil
        shutil.rmtree(self.tmp, ignore_errors=True)

    def assert_nothing_left(self, out=""):
        deadline = time.monotonic() + 10
        while (postgres_pids(self.tmp) or orphans() - self.before) and time.monotonic() < deadline:
            time.sleep(0.2)
        self.assertEqual(postgres_pids(self.tmp), set(), f"the cluster's server is left\n{out}")
        self.assertEqual(orphans() - self.before, set(), f"a postgres process without its server is left\n{out}")
        self.assertEqual(os.listdir(os.path.join(self.tmp, "root")), [], f"the cluster's folder is left\n{out}")

    def test_run_verifies_and_cleans_up(self):
        """A run's answers are verified, its protocol recorded (issue 29) and nothing is left. With
        --warmup 2 --flush-caches a search case's first pass is its cold one (kept apart), then one
        warm-up pass, the timed passes warm; the index build has no cold pass (every pass builds
        anew: its first build is a trial) and says why."""
        from hdb import contract
        p = subprocess.run(peer_argv(self.tmp, *SMALL, "--warmup", "2", "--flush-caches"), capture_output=True,
                           text=True, timeout=180, env=peer_env())
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assert_nothing_left()
        with open(os.path.join(self.tmp, "pg.json")) as f:
            doc = json.load(f)
        self.assertEqual((doc["benchmark"], doc["backend"], doc["complete"]), ("ngram", "pg_trgm", True))
        threads = os.cpu_count()  # no --threads: every core, as the server was told
        self.assertEqual(doc["context"]["threads_used"], threads)
        self.assertEqual(doc["context"]["peer"]["settings"]["max_parallel_workers_per_gather"], str(threads - 1))
        ids = [r["id"] for r in doc["results"]]
        self.assertEqual(ids, ["index/build@100", "search/word_similarity[k=0,threshold=0.3]@100",
                               "search/word_similarity[k=0,threshold=0.6]@100",
                               "index/build@64K", "search/word_similarity[k=0,threshold=0.3]@64K",
                               "search/word_similarity[k=0,threshold=0.6]@64K"])
        # A size the benchmark skips (no document fits in 100 bytes) is skipped here too, with its reason.
        for r in doc["results"][:3]:
            self.assertEqual((r["status"], r["reason"]), ("skipped", "no document fits in 100 bytes"))
        doc["results"] = doc["results"][3:]
        for r in doc["results"]:
            self.assertEqual(r["status"], "ok", r["reason"])
            self.assertTrue(r["verification"]["verified"])
        for r in doc["results"][1:]:
            self.assertIn("sequential scan", r["verification"]["detail"])
            self.assertIn("Bitmap Index Scan on docs_body_trgm", r["extra"]["plan"])
            self.assertIn("Seq Scan", r["extra"]["check_plan"])
            self.assertLessEqual(r["extra"]["queries_planner_uses_index"], 4)
            self.assertLessEqual(r["extra"]["queries_parallel"], 4)
            self.assertIn("recomputed", r["verification"]["detail"])
            e = r["extra"]
            self.assertEqual(e["queries"], 4)
            self.assertEqual(len(e["per_query"]), 4)
            for key in ("hits_total", "nsearch_hits_total", "both_hits_total", "jaccard_mean",
                        "share_of_nsearch_hits_found", "share_of_hits_in_nsearch", "query_median_s"):
                self.assertIn(key, e)
            self.assertLessEqual(e["both_hits_total"], min(e["hits_total"], e["nsearch_hits_total"]))
        flush = contract.flush_description(contract.last_level_cache_bytes())
        for r in doc["results"]:
            pr = r["protocol"]
            self.assertEqual((pr["timed_as"], pr["flush"]), ("warm", flush))
            self.assertEqual(r["energy"]["source"], "none")
            if r["test"] == "index":
                self.assertEqual((pr["cold"], pr["warmup_passes"], pr["cold_note"]), (None, 0, pg_trgm.BUILD_COLD_NOTE))
            else:
                self.assertEqual((pr["warmup_passes"], pr["cold_note"]), (1, pg_trgm.SEARCH_COLD_NOTE))
                self.assertGreater(pr["cold"]["total_s"], 0)
                self.assertEqual(pr["cold"]["phases_s"], {"query": pr["cold"]["total_s"]})
        # A lower threshold returns at least the rows of a higher one.
        self.assertGreaterEqual(doc["results"][1]["extra"]["hits_total"], doc["results"][2]["extra"]["hits_total"])
        c = subprocess.run([sys.executable, os.path.join(REPO, "tests", "check_results.py"),
                            os.path.join(self.tmp, "pg.json"), "3", "--csv", os.path.join(self.tmp, "pg.csv")],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(c.returncode, 0, c.stdout + c.stderr)

    def interrupt(self, sig):
        # More queries and passes so that the run is surely still going when the signal comes.
        argv = peer_argv(self.tmp, "--corpus", "synthetic", "--sizes", "1M", "--pg-query-count", "10",
                         "--passes", "5")
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=peer_env())
        try:
            deadline = time.monotonic() + 60
            while not postgres_pids(self.tmp) and time.monotonic() < deadline:
                time.sleep(0.1)
            self.assertTrue(postgres_pids(self.tmp), "the server never started")
            time.sleep(1.5)
            p.send_signal(sig)
            out, _ = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.assertEqual(p.returncode, 128 + sig, out)
        self.assert_nothing_left(out)
        with open(os.path.join(self.tmp, "pg.json")) as f:
            doc = json.load(f)
        self.assertFalse(doc["complete"])
        self.assertEqual(doc["incomplete_reason"], f"interrupted by signal {int(sig)}")

    def test_kill_9_of_the_peer(self):
        # The server ends by itself (PR_SET_PDEATHSIG); the folder stays until the next run.
        p = subprocess.Popen(peer_argv(self.tmp, "--corpus", "synthetic", "--sizes", "1M", "--passes", "5"),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=peer_env())
        try:
            deadline = time.monotonic() + 60
            while not postgres_pids(self.tmp) and time.monotonic() < deadline:
                time.sleep(0.1)
            self.assertTrue(postgres_pids(self.tmp), "the server never started")
        finally:
            p.kill()
            p.wait()
        deadline = time.monotonic() + 20
        while (postgres_pids(self.tmp) or orphans() - self.before) and time.monotonic() < deadline:
            time.sleep(0.2)
        self.assertEqual(postgres_pids(self.tmp), set(), "the server outlived its peer")
        root = os.path.join(self.tmp, "root")
        left = os.listdir(root)
        self.assertEqual(len(left), 1)
        # A folder of a live process is kept; the dead peer's is removed.
        live = os.path.join(root, f"{pg_trgm.TMP_PREFIX}{os.getppid()}-x")
        os.mkdir(live)
        pg_trgm.remove_stale(root)
        self.assertEqual(os.listdir(root), [os.path.basename(live)])
        os.rmdir(live)
        self.assert_nothing_left()

    def test_sigterm_stops_the_cluster(self):
        self.interrupt(signal.SIGTERM)

    def test_sigint_stops_the_cluster(self):
        self.interrupt(signal.SIGINT)


class Skip(unittest.TestCase):
    def test_without_postgresql(self):
        saved = pg_trgm.find_bindir
        pg_trgm.find_bindir = lambda: ""
        try:
            ok, why = pg_trgm.available()
            self.assertFalse(ok)
            self.assertIn("postgresql-contrib", why)
            with tempfile.TemporaryDirectory() as tmp:
                rc = pg_trgm.main(["ngram", "--build-dir", BUILD, "--json", os.path.join(tmp, "x.json")])
            self.assertEqual(rc, 77)
        finally:
            pg_trgm.find_bindir = saved


if __name__ == "__main__":
    unittest.main()
