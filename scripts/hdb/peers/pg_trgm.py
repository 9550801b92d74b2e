"""pg_trgm: PostgreSQL's trigram search as the n-gram peer (docs/peers.md, "pg_trgm").

A throwaway PostgreSQL cluster (initdb in a temporary folder, Unix socket only, fsync off) gets the
n-gram benchmark's own corpus and queries (hdb-export-ngram: same size, seed and options as
hdb-ngram-*), a GIN trigram index (timed: index/build) and runs every query with
`body %> query` (word_similarity >= pg_trgm.word_similarity_threshold) at several thresholds (timed
server-side: search/word_similarity[k=K,threshold=T]). Every answer is verified before a time is
recorded: the index answer must equal the sequential-scan answer of the same predicate on every
query, and a sample of rows (accepted and rejected) is recomputed by word_similarity() below, a
re-implementation of pg_trgm's definition. The hits are then compared with nsearch's (the serial
reference's, from the export). Results: a hetdb-bench/2 document and its CSV, backend "pg_trgm".

Run by the driver through command(job), or alone from the repository root:
  PYTHONPATH=scripts python3 -m hdb.peers.pg_trgm ngram --build-dir build --json pg.json --csv pg.csv --sizes 1M
Exit 0 ok, 1 a case failed, 2 usage, 77 cannot run here (no PostgreSQL, no export tool), 128+N signal N.
"""
import json
import os
import pwd
import random
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .. import contract, watchdog
from . import record

BENCHMARKS = ("ngram",)
NAME = "pg_trgm"
EXPORT_TOOL = "hdb-export-ngram"
# Thresholds a user would set (docs/peers.md): pg_trgm's default for %> is 0.6; 0.3 is the default
# of the plain similarity operator %, the loosest setting people use; 0.8 is near-exact.
DEFAULT_THRESHOLDS = "0.3,0.5,0.6,0.8"
# Error levels whose (mutated) queries pg_trgm answers: exact quotations and a mid level.
DEFAULT_ERRORS = "0,6"
# Queries answered: the first N of the benchmark's (draw_queries makes query j from the seed and j
# alone, so the first N of 100 are the same N queries). pg_trgm takes milliseconds to seconds a query.
DEFAULT_QUERY_COUNT = 10
# Seconds the peer may spend over all sizes when run alone (the driver stops a peer at the
# benchmark's timeout_s and passes BUDGET_SHARE of it): a size whose estimate (the last size's time,
# scaled by size) does not fit what is left is skipped with that reason instead of being cut off by the
# time limit.
DEFAULT_BUDGET_S = 450.0
BUDGET_SHARE = 0.75  # of the driver's time limit (PeerJob.timeout_s): 450 s of default.toml's 600
# results[].protocol.cold_note of each test (docs/peers.md, "pg_trgm").
BUILD_COLD_NOTE = ("index/build runs with no warm-up whatever --warmup says: every pass drops the index and builds it "
                   "again, and the first build after the load (COPY, VACUUM ANALYZE: the table's pages already in "
                   "shared_buffers) is the one a user waits for, so it is the first trial, not a pass kept apart")
SEARCH_COLD_NOTE = ("the first pass over the level's queries at this threshold, timed as every pass (server-side, the "
                    "sum of its queries), in a new psql session as every pass (its start-up, the tables and the "
                    "index opened and pg_trgm loaded by one untimed statement, outside the time); the table and its "
                    "GIN index were read by the build and the size's earlier cases: they sit in shared_buffers and "
                    "the OS page cache, so it is the first run of these statements, not a cold start of the server")
SAMPLE_QUERIES = 2          # queries per level whose rows are recomputed in Python
SAMPLE_ROWS = 30            # accepted rows and rejected rows (each) per sampled query
SAMPLE_MAX_DOC = 1500       # longest document recomputed (pure Python, O(n^2) at worst)
TMP_PREFIX = "hdb-pg-trgm-"


# ----------------------------------------------------------------------------------------------
# The interface of scripts/hdb/peers/__init__.py

def find_bindir():
    """The newest /usr/lib/postgresql/<ver>/bin holding initdb, postgres and psql, else ''."""
    root = Path("/usr/lib/postgresql")
    try:
        vers = sorted((v.name for v in root.iterdir() if v.name.isdigit()), key=int, reverse=True)
    except OSError:
        return ""
    for v in vers:
        b = root / v / "bin"
        if all(os.access(b / x, os.X_OK) for x in ("initdb", "postgres", "psql")):
            return str(b)
    return ""


def _extension_present(bindir):
    try:
        share = subprocess.run([str(Path(bindir, "pg_config")), "--sharedir"], capture_output=True, text=True,
                               timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        share = ""
    ver = Path(bindir).parent.name
    for d in (share, f"/usr/share/postgresql/{ver}"):
        if d and Path(d, "extension", "pg_trgm.control").is_file():
            return True
    return False


def available(python=None):
    """(ok, reason): PostgreSQL's server binaries and the pg_trgm extension (Debian postgresql,
    postgresql-contrib); as root also the 'postgres' system user (the server refuses root)."""
    bindir = find_bindir()
    if not bindir:
        return False, ("PostgreSQL is not installed (no /usr/lib/postgresql/<version>/bin with initdb, postgres, "
                       "psql): apt-get install postgresql postgresql-contrib")
    if not _extension_present(bindir):
        return False, f"the pg_trgm extension is missing for {bindir}: apt-get install postgresql-contrib"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return False, "running as root and there is no 'postgres' system user to run the server as"
    return True, ""


def command(job):
    """argv of one run (a PeerJob), as the driver runs every peer: python -m hdb.peers.<module>. The
    budget is BUDGET_SHARE of the driver's time limit, when it has one."""
    timeout = getattr(job, "timeout_s", 0) or 0
    budget = ["--pg-budget", f"{BUDGET_SHARE * timeout:g}"] if timeout else []
    return [job.python or sys.executable, "-m", "hdb.peers.pg_trgm", job.benchmark, "--json", job.json,
            "--csv", job.csv, "--build-dir", job.build_dir] + budget + list(job.args)


# ----------------------------------------------------------------------------------------------
# word_similarity, re-implemented from pg_trgm's definition and algorithm (contrib/pg_trgm,
# calc_word_similarity / iterate_word_similarity) for ASCII text: the independent check of a sample.

def _f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def _sml(count, len1, len2):
    # CALCSML: (float4) count / (float4) (len1 + len2 - count)
    return _f32(_f32(float(count)) / _f32(float(len1 + len2 - count)))


def trigrams_in_order(text):
    """pg_trgm's trigrams of a string, in order: every word (a run of letters and digits, lower-cased)
    padded with two spaces before and one after, and its consecutive 3-character pieces."""
    out, word = [], []
    for c in text + " ":
        if c.isascii() and c.isalnum():
            word.append(c.lower())
        elif word:
            w = "  " + "".join(word) + " "
            out += [w[i:i + 3] for i in range(len(w) - 2)]
            word = []
    return out


def word_similarity(query, doc):
    """Greatest similarity |Q & E| / |Q | E| between the query's trigram set Q and an extent E of the
    document's ordered trigrams, searched as pg_trgm searches it (upper bound at each trigram of the
    query, lower bound moved right while that raises the similarity); float4 as PostgreSQL."""
    q = set(trigrams_in_order(query))
    seq = trigrams_in_order(doc)
    ulen1 = len(q)
    if not ulen1 or not seq:
        return 0.0
    found = [t in q for t in seq]
    lastpos = {}
    ulen2 = count = 0
    lower = -1
    best = 0.0
    for i, t in enumerate(seq):
        if lower >= 0 or found[i]:
            if t not in lastpos:
                ulen2 += 1
                count += found[i]
            lastpos[t] = i
        if not found[i]:
            continue
        if lower == -1:
            lower, ulen2 = i, 1
        cur = _sml(count, ulen1, ulen2)
        tmp_count, tmp_ulen2, prev_lower = count, ulen2, lower
        for tl in range(lower, i + 1):
            s = _sml(tmp_count, ulen1, tmp_ulen2)
            if s > cur:
                cur, ulen2, lower, count = s, tmp_ulen2, tl, tmp_count
            if lastpos.get(seq[tl]) == tl:
                tmp_ulen2 -= 1
                tmp_count -= found[tl]
        best = max(best, cur)
        for tl in range(prev_lower, lower):
            if lastpos.get(seq[tl]) == tl:
                del lastpos[seq[tl]]
    return best


# ----------------------------------------------------------------------------------------------
# The throwaway cluster

SERVER_SETTINGS = {
    "listen_addresses": "''",  # no TCP: the Unix socket in the cluster's folder only
    # A throwaway cluster: nothing to keep after a crash, so no fsync (the timed queries only read).
    "fsync": "off", "synchronous_commit": "off", "full_page_writes": "off",
    # The corpus and its index stay in memory; GIN builds in maintenance_work_mem.
    "shared_buffers": "'256MB'", "maintenance_work_mem": "'256MB'", "work_mem": "'64MB'",
    "logging_collector": "off",
}

def query_threads(harness):
    """Processes a query may use: --threads, else every core (the executables' rule)."""
    return harness.threads or os.cpu_count() or 1


def server_settings(threads):
    """SERVER_SETTINGS with the parallelism the harness's --threads gives: a query runs on its leader
    and up to threads - 1 parallel workers (PostgreSQL's own default is 2 workers whatever the
    machine). The GIN build of PostgreSQL 15 is serial whatever the setting."""
    workers = max(threads - 1, 0)
    return dict(SERVER_SETTINGS, max_parallel_workers_per_gather=str(workers), max_parallel_workers=str(workers),
                max_worker_processes=str(max(8, workers + 2)))


class Cluster:
    """initdb into a fresh temporary folder, the server a direct child of this process (same process
    group, so the driver's SIGTERM/SIGKILL of the group reaches it), Unix socket in that folder only.
    stop() ends the server and removes the folder; it is safe to call twice."""

    def __init__(self, bindir, tmp_root=None, threads=1):
        self.bindir = bindir
        self.threads = threads
        self.proc = None
        self.as_user = None
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            self.as_user = (pw.pw_uid, pw.pw_gid)
        self.dir = record.work_dir(TMP_PREFIX, tmp_root)
        try:  # a signal before the caller holds this object must not leave the folder behind
            Path(self.dir).chmod(0o700)
            if self.as_user:
                os.chown(self.dir, *self.as_user)
            self.data = str(Path(self.dir, "data"))
            self.port = _free_port()
        except BaseException:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise
        self.user = "hdb"

    def _run_as(self):
        if not self.as_user:
            return {}
        uid, gid = self.as_user
        return {"user": uid, "group": gid, "extra_groups": []}

    def start(self):
        # initdb runs its own postgres processes (bootstrap, single-user): in a process group of its
        # own, so that a signal while it runs ends all of them before the folder is removed.
        init = subprocess.Popen([str(Path(self.bindir, "initdb")), "-D", self.data, "-U", self.user, "-A",
                                 "trust", "-E", "UTF8", "--locale=C", "--no-sync"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=self.dir, start_new_session=True,
                                **self._run_as())
        try:
            _, err = init.communicate()
        except BaseException:
            try:
                os.killpg(init.pid, signal.SIGKILL)
            except OSError:
                pass
            init.wait()
            raise
        r = subprocess.CompletedProcess(init.args, init.returncode, "", err)
        if r.returncode != 0:
            hint = (" (the server runs as 'postgres', which must be able to reach the folder: choose a --tmp-root "
                    "it can traverse)") if self.as_user and "Permission denied" in r.stderr else ""
            raise RuntimeError(f"initdb failed{hint}: {r.stderr.strip()[-500:]}")
        settings = dict(server_settings(self.threads), unix_socket_directories=f"'{self.dir}'", port=str(self.port))
        with Path(self.data, "postgresql.auto.conf").open("a") as f:
            for k, v in settings.items():
                f.write(f"{k} = {v}\n")
        self.logfile = Path(self.dir, "server.log").open("w")
        if self.as_user:
            os.chown(self.logfile.name, *self.as_user)
        # A direct child in this process group, asking the kernel for SIGTERM when the peer dies
        # (PR_SET_PDEATHSIG, set after the change of user): a kill -9 of the peer alone ends it too.
        self.proc = subprocess.Popen([str(Path(self.bindir, "postgres")), "-D", self.data],
                                     stdout=self.logfile, stderr=subprocess.STDOUT, cwd=self.dir,
                                     preexec_fn=watchdog.child_preexec(os.getpid()), **self._run_as())
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited at start: {self._log_tail()}")
            if subprocess.run(self.psql_argv() + ["-c", "select 1"], capture_output=True).returncode == 0:
                self.sql("CREATE EXTENSION pg_trgm")
                return
            time.sleep(0.2)
        raise RuntimeError(f"the server did not accept connections within 60 s: {self._log_tail()}")

    def _log_tail(self):
        try:
            with Path(self.dir, "server.log").open() as f:
                return f.read()[-500:].strip()
        except OSError:
            return "(no server log)"

    def psql_argv(self):
        return [str(Path(self.bindir, "psql")), "-X", "-q", "-h", self.dir, "-p", str(self.port), "-U", self.user,
                "-d", "postgres", "-v", "ON_ERROR_STOP=1"]

    def sql(self, script, rows=False):
        """Runs SQL in one psql session; with rows, returns the output lines (unaligned, tab-separated,
        tuples only). RuntimeError with psql's message on failure."""
        argv = self.psql_argv() + (["-A", "-t", "-F", "\t"] if rows else [])
        r = subprocess.run(argv, input=script, capture_output=True, text=True, **self._run_as())
        if r.returncode != 0:
            raise RuntimeError(f"psql: {r.stderr.strip()[-800:]}")
        return [ln for ln in r.stdout.split("\n") if ln] if rows else None

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # fast shutdown
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.send_signal(signal.SIGQUIT)  # immediate shutdown
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        if getattr(self, "logfile", None):
            self.logfile.close()
        for _ in range(50):  # a server process that ends late may still write a file into it
            shutil.rmtree(self.dir, ignore_errors=True)
            if not Path(self.dir).exists():
                break
            time.sleep(0.1)
        self.proc = None


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def remove_stale(tmp_root):
    """Folders a killed run left (its pid gone): a kill -9 of this process skips every cleanup. A server
    still running in one (its postgres with that data folder, by its command line) is stopped first."""
    def stop_server(path):
        try:
            with Path(path, "data", "postmaster.pid").open() as f:
                spid = int(f.readline())
            cmdline = Path(f"/proc/{spid}/cmdline").read_bytes().split(b"\0")
            if cmdline[0].rsplit(b"/", 1)[-1] == b"postgres" and os.fsencode(Path(path, "data")) in cmdline:
                os.kill(spid, signal.SIGQUIT)
                time.sleep(1)
        except (OSError, ValueError):
            pass
    record.remove_stale_dirs(TMP_PREFIX, tmp_root, stop_server)


# ----------------------------------------------------------------------------------------------
# One size

SETUP_SQL = r"""
DROP TABLE IF EXISTS docs, queries, hdb_times;
CREATE TABLE docs (id integer PRIMARY KEY, body text NOT NULL);
CREATE TABLE queries (k integer, j integer, q text NOT NULL, PRIMARY KEY (k, j));
CREATE TABLE hdb_times (what text, pass integer, seconds float8);
COPY docs FROM '{docs}';
COPY queries FROM '{queries}';
VACUUM ANALYZE docs;
VACUUM ANALYZE queries;
-- One pass over the level's queries: each query timed server-side (clock_timestamp) around the
-- statement that collects its hits, so no client, socket or psql start-up is in the time.
CREATE FUNCTION hdb_pass(level integer) RETURNS TABLE (j integer, seconds float8, hits integer[])
LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz; rec record; ids integer[];
BEGIN
  FOR rec IN SELECT queries.j, queries.q FROM queries WHERE queries.k = level ORDER BY queries.j LOOP
    t0 := clock_timestamp();
    SELECT array_agg(d.id ORDER BY d.id) INTO ids FROM docs d WHERE d.body %> rec.q;
    j := rec.j; seconds := extract(epoch FROM clock_timestamp() - t0); hits := coalesce(ids, '{{}}');
    RETURN NEXT;
  END LOOP;
END $$;
-- The plan of each of the level's queries, planned for its own text (EXPLAIN, not run).
CREATE FUNCTION hdb_plans(level integer) RETURNS TABLE (j integer, plan text)
LANGUAGE plpgsql AS $$
DECLARE rec record; p json;
BEGIN
  FOR rec IN SELECT queries.j, queries.q FROM queries WHERE queries.k = level ORDER BY queries.j LOOP
    EXECUTE 'EXPLAIN (FORMAT JSON) SELECT array_agg(id ORDER BY id) FROM docs WHERE body %> '
            || quote_literal(rec.q) INTO p;
    j := rec.j; plan := p::jsonb::text;
    RETURN NEXT;
  END LOOP;
END $$;
"""

BUILD_SQL = """
DROP INDEX IF EXISTS docs_body_trgm;
DO $$ DECLARE t0 timestamptz; BEGIN
  t0 := clock_timestamp();
  CREATE INDEX docs_body_trgm ON docs USING gin (body gin_trgm_ops);
  INSERT INTO hdb_times VALUES ('build', {p}, extract(epoch FROM clock_timestamp() - t0));
END $$;
"""


def _escape_copy(s):
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def _ints(arr):
    a = arr.strip("{}")
    return [int(x) for x in a.split(",")] if a else []


def read_export(path):
    docs: list[str] = []
    queries: dict[int, list[dict[str, Any]]] = {}
    header = None
    with Path(path).open(encoding="utf-8") as f:
        for ln in f:
            o = json.loads(ln)
            if header is None:
                if o.get("format") != "hdb-ngram-export/1":
                    raise RuntimeError(f"{path}: not an hdb-ngram-export/1 file")
                header = o
            elif "doc" in o:
                if o["doc"] != len(docs):
                    raise RuntimeError(f"{path}: document {o['doc']} out of order")
                docs.append(o["text"])
            else:
                queries.setdefault(o["k"], []).append(o)
    return header, docs, queries


# How a statement may run: as the planner chooses (recorded, not timed), through the GIN index
# (timed), by a sequential scan (the check).
# Every statement is planned for its own query text (plan_cache_mode), as a query sent with its
# text is: PL/pgSQL would otherwise switch to one generic plan after five executions.
MODES = {"planner": "SET plan_cache_mode = force_custom_plan;\n",
         "index": "SET plan_cache_mode = force_custom_plan; SET enable_seqscan = off;\n",
         "scan": "SET plan_cache_mode = force_custom_plan; SET enable_bitmapscan = off; SET enable_indexscan = off;\n"}


def plans_of(cluster, level, threshold, mode):
    """The plan of every query of the level, as the statement runs in that mode: {j: node names,
    outermost first}."""
    rows = cluster.sql(f"SET pg_trgm.word_similarity_threshold = {threshold};\n{MODES[mode]}"
                       f"SELECT j, plan FROM hdb_plans({level});", rows=True)
    out = {}
    for ln in rows:
        j, text = ln.split("\t", 1)
        out[int(j)] = _plan_nodes(json.loads(text)[0]["Plan"])
    return out


def _plan_nodes(plan, nodes=None):
    """A plan's nodes depth first, outermost first: 'Bitmap Index Scan on docs_body_trgm', 'Gather', ..."""
    nodes = [] if nodes is None else nodes
    nodes.append(plan["Node Type"] + (f" on {plan['Index Name']}" if "Index Name" in plan else ""))
    for c in plan.get("Plans", []):
        _plan_nodes(c, nodes)
    return nodes


def _uses_index(nodes):
    return any("docs_body_trgm" in n for n in nodes)


def run_pass(cluster, level, threshold, mode="planner"):
    off = MODES[mode]
    t0 = time.monotonic()
    # Each pass is a new session: one untimed statement first opens the tables and the index and
    # loads pg_trgm, so the pass's first query does not pay for the session's start.
    rows = cluster.sql(f"SET pg_trgm.word_similarity_threshold = {threshold};\n{off}"
                       "SELECT count(*) FROM docs WHERE body %> 'warm' AND id < 0;\n"
                       f"SELECT j, seconds, hits FROM hdb_pass({level});", rows=True)[1:]
    wall = time.monotonic() - t0
    out = {}
    for ln in rows:
        j, sec, hits = ln.split("\t")
        out[int(j)] = (float(sec), _ints(hits))
    return out, wall


def sample_check(cluster, docs, qs, level, thresholds, hits_at, seed):
    """Recomputes word_similarity for a sample of rows (SAMPLE_ROWS accepted at the lowest threshold
    and SAMPLE_ROWS rejected ones, of at most SAMPLE_MAX_DOC characters, of SAMPLE_QUERIES queries) and checks it
    against PostgreSQL's word_similarity()
    and each threshold's answer. Returns (ok, detail, rows checked)."""
    rng = random.Random(seed)
    checked = 0
    lowest = min(thresholds)
    for qi in qs[:SAMPLE_QUERIES]:
        j, q = qi["query"], qi["normalized"]
        acc = set(hits_at[lowest][j])
        short = [i for i in sorted(acc) if len(docs[i]) <= SAMPLE_MAX_DOC]
        take = rng.sample(short, min(len(short), SAMPLE_ROWS))
        rej = [i for i in rng.sample(range(len(docs)), min(len(docs), 8 * SAMPLE_ROWS + len(acc)))
               if i not in acc and len(docs[i]) <= SAMPLE_MAX_DOC][:SAMPLE_ROWS]
        ids = sorted(take + rej)
        if not ids:
            continue
        rows = cluster.sql(f"SELECT id, word_similarity(q, body) FROM docs, queries WHERE k = {level} AND j = {j} "
                           f"AND id = ANY('{{{','.join(map(str, ids))}}}'::int[]) ORDER BY id;", rows=True)
        pg = {int(a): float(b) for a, b in (r.split("\t") for r in rows)}
        for i in ids:
            mine = word_similarity(q, docs[i])
            if _f32(pg[i]) != mine:
                return False, (f"k={level} query {j}, article {i}: word_similarity {pg[i]} in PostgreSQL, "
                               f"{mine} recomputed"), checked
            for t in thresholds:
                if (mine >= t) != (i in set(hits_at[t][j])):
                    return False, (f"k={level} query {j}, article {i}: word_similarity {mine} against threshold {t}, "
                                   f"but {'not ' if i not in set(hits_at[t][j]) else ''}returned"), checked
            checked += 1
    return True, "", checked


def overlap(pg_hits, ns_hits):
    both = tot_pg = tot_ns = 0
    jac, same, per = [], 0, []
    for j in sorted(ns_hits):
        p, n = set(pg_hits[j]), set(ns_hits[j])
        b = len(p & n)
        u = len(p | n)
        jac.append(b / u if u else 1.0)
        same += p == n
        both += b
        tot_pg += len(p)
        tot_ns += len(n)
        per.append({"query": j, "hits": len(p), "nsearch_hits": len(n), "both": b})
    q = max(len(ns_hits), 1)
    return {"hits_total": tot_pg, "mean_hits_per_query": tot_pg / q,
            "queries_with_hits": sum(1 for j in pg_hits if pg_hits[j]),
            "nsearch_hits_total": tot_ns, "nsearch_mean_hits_per_query": tot_ns / q,
            "nsearch_queries_with_hits": sum(1 for j in ns_hits if ns_hits[j]),
            "both_hits_total": both, "jaccard_mean": sum(jac) / q,
            "share_of_nsearch_hits_found": both / tot_ns if tot_ns else 1.0,
            "share_of_hits_in_nsearch": both / tot_pg if tot_pg else 1.0,
            "queries_identical": same, "per_query": per}


class SkipSize(Exception):
    pass


def _case(test, variant, params, size, elements, input_bytes, extra=None):
    # bytes.input: the corpus text a sequential scan reads; min_moved 0: no % of peak is claimed.
    return {"size_bytes": size, "elements": elements,
            "bytes": {"input": max(input_bytes, 1), "min_moved": 0}, "extra": extra or {}}


def export(a, cluster, size, levels):
    out = str(Path(cluster.dir, "export.jsonl"))
    cmd = [a.export_tool, "--size", str(size), "--seed", str(a.harness.seed), "--errors",
           ",".join(map(str, levels)), "--out", out] + a.export_args
    print("$ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode == contract.EXIT_SKIP:
        raise SkipSize(p.stderr.strip().rsplit("skipped: ", 1)[-1])
    if p.returncode != 0:
        raise RuntimeError(f"{EXPORT_TOOL} exited {p.returncode}: {p.stderr.strip()[-500:]}")
    try:
        return read_export(out)
    finally:
        Path(out).unlink()


def load(cluster, docs, queries):
    """The corpus and the queries into tables by server-side COPY (text format, escaped), then
    VACUUM ANALYZE; the timing function hdb_pass. Untimed."""
    dpath, qpath = str(Path(cluster.dir, "docs.tsv")), str(Path(cluster.dir, "queries.tsv"))
    with Path(dpath).open("w", encoding="utf-8") as f:
        for i, d in enumerate(docs):
            f.write(f"{i}\t{_escape_copy(d.strip())}\n")
    with Path(qpath).open("w", encoding="utf-8") as f:
        for k, qs in queries.items():
            for qi in qs:
                f.write(f"{k}\t{qi['query']}\t{_escape_copy(qi['normalized'].strip())}\n")
    for p in (dpath, qpath):
        if cluster.as_user:
            os.chown(p, *cluster.as_user)
    try:
        cluster.sql("DROP FUNCTION IF EXISTS hdb_pass(integer);\nDROP FUNCTION IF EXISTS hdb_plans(integer);\n"
                    + SETUP_SQL.format(docs=dpath, queries=qpath))
    finally:
        Path(dpath).unlink()
        Path(qpath).unlink()


def run_size(a, cluster, doc, size, state):
    levels, thresholds = a.levels, a.thresholds
    header, docs, queries = export(a, cluster, size, levels)
    if not header["truncated"] and header["text_bytes"] < size:
        # As hdb-ngram-*: a size beyond a finite corpus uses all of it, once.
        if state.get("whole") and state["whole"] != size:
            raise SkipSize(f"the corpus ({header['corpus']}) holds only {header['text_bytes']} bytes of text, "
                           f"all used at size {state['whole']}")
        state["whole"] = size
    t0 = time.monotonic()
    load(cluster, docs, queries)
    text_bytes = sum(len(d) for d in docs)
    corpus = {"corpus": header["corpus"], "articles": header["articles"], "text_bytes": header["text_bytes"],
              "normalized_bytes": text_bytes}
    print(f"pg_trgm: {contract.format_size(size)}: loaded {len(docs)} articles and "
          f"{sum(len(v) for v in queries.values())} queries in {time.monotonic() - t0:.1f} s", flush=True)

    # index/build: CREATE INDEX ... USING gin (body gin_trgm_ops), timed server-side; every pass
    # starts from no index (no warm-up: the first build is the one a user waits for, and a trial;
    # protocol.cold is null and its note says so: BUILD_COLD_NOTE).
    case = _case("index", "build", {}, size, len(docs), text_bytes)
    built: list[int] = []

    def build():
        built.append(len(built) + 1)
        cluster.sql(BUILD_SQL.format(p=built[-1]))
        return float(cluster.sql(f"SELECT seconds FROM hdb_times WHERE what = 'build' AND pass = {built[-1]}",
                                 rows=True)[0])
    build_passes = a.harness.with_warmup(0).measure(build)
    build_passes.cold_note = BUILD_COLD_NOTE
    rows = int(cluster.sql("SELECT count(*) FROM docs d WHERE d.body IS NOT NULL", rows=True)[0])
    index_bytes = int(cluster.sql("SELECT pg_relation_size('docs_body_trgm')", rows=True)[0])
    extra = dict(corpus, index_bytes=index_bytes, index="gin (body gin_trgm_ops)",
                 table_bytes=int(cluster.sql("SELECT pg_table_size('docs')", rows=True)[0]))
    r = doc.ok(case, "index", "build", {}, build_passes, True, rows == len(docs),
               f"GIN index built over all {rows} rows (= the export's articles); its answers are checked by every "
               f"search case against a sequential scan" if rows == len(docs) else
               f"the table holds {rows} rows, the export {len(docs)} articles", phase="build", extra=extra)
    print(_line(r), flush=True)
    index_build_s = contract.summarize(build_passes.times)["median"]

    for level in levels:
        qs = queries.get(level, [])
        ns = {qi["query"]: qi["hits"] for qi in qs}
        hits: dict[float, dict[int, list[int]]] = {}
        measured: list[Any] = []
        for t in thresholds:
            params = {"k": level, "threshold": t}
            case = _case("search", "word_similarity", params, size, len(qs), text_bytes, dict(corpus))
            try:
                measured.append((case, params) + search_case(a, cluster, level, t, ns, hits))
            except RuntimeError as e:
                record.stopped()  # psql ended by the driver's signal: the run stops, no failed case
                measured.append((case, params, None, False, str(e), {}))
        # Verification (b), once per level: a sample of rows recomputed at the thresholds whose
        # answers passed (a).
        def check(ts, qs=qs, level=level, hits=hits):  # called in this iteration; bound for clarity
            return sample_check(cluster, docs, qs, level, ts, hits, a.harness.seed + level)
        measured = verify_sample(measured, len(qs), check)
        for case, params, ts, ok, detail, extra in measured:
            extra["index_build_s"] = index_build_s
            if ts is None:
                r = doc.failed(case, "search", "word_similarity", params, detail, detail, True)
            else:
                r = doc.ok(case, "search", "word_similarity", params, ts, True, ok, detail, extra=extra)
            print(_line(r), flush=True)


def verify_sample(measured, queries, check):
    """Verification (b) of one level's search cases. measured: [(case, params, times or None,
    verified by (a), detail, extra)]; check(thresholds) -> (ok, why, rows checked) is sample_check
    over those thresholds. It runs over the thresholds whose answers passed (a), so a case that
    failed (a) neither skips (b) for the others nor makes them fail; a failure of (b) fails every case
    it covered. Returns measured with (b)'s verdict and detail added to those cases."""
    passed = [m[1]["threshold"] for m in measured if m[2] is not None and m[3]]
    if not passed:
        return measured
    try:
        ok, why, n = check(passed)
    except RuntimeError as e:
        record.stopped()
        ok, why, n = False, str(e), 0
    if not ok:
        sample = f"; word_similarity recomputed on a sample differs: {why}"
    elif n == 0:
        sample = (f"; word_similarity recomputed for no row: no accepted or rejected article of the "
                  f"{min(SAMPLE_QUERIES, queries)} sampled queries has at most {SAMPLE_MAX_DOC} characters")
    else:
        sample = (f"; word_similarity recomputed (word_similarity() of this module) for {n} sampled rows of "
                  f"{min(SAMPLE_QUERIES, queries)} queries, accepted and rejected: equal to PostgreSQL's, and "
                  f"a row is returned iff it reaches the threshold, at thresholds {', '.join(map(str, passed))}")
    return [(c, p, ts, ok, d + sample, x) if ts is not None and v else (c, p, ts, v, d, x)
            for c, p, ts, v, d, x in measured]


def search_case(a, cluster, level, t, ns, hits):
    """search/word_similarity[k, threshold]: timed passes over the level's queries through the GIN
    index (enable_seqscan off: the planner alone often takes a sequential scan, see docs/peers.md),
    then the same predicate by a sequential scan (verification a). Returns (the passes:
    contract.Passes, verified, detail, extra) and leaves the answers in hits[t]."""
    plans = {m: plans_of(cluster, level, t, m) for m in MODES}
    per_query, last = [], {}

    def one():
        res, _ = run_pass(cluster, level, t, "index")
        per_query.append({j: sec for j, (sec, _) in res.items()})
        last["res"] = res
        return sum(sec for sec, _ in res.values())
    passes = a.harness.measure(one, cold_note=SEARCH_COLD_NOTE)
    timed = per_query[len(per_query) - len(passes.times):]
    got = hits[t] = {j: h for j, (_, h) in last["res"].items()}
    scan = {j: h for j, (_, h) in run_pass(cluster, level, t, "scan")[0].items()}
    qmed = [contract.summarize(p[j] for p in timed)["median"] for j in sorted(ns)]
    first = min(ns) if ns else None
    extra = dict(overlap(got, ns), error_level=level, threshold=t, operator="%>", queries=len(ns),
                 query_mean_s=sum(qmed) / max(len(qmed), 1), query_median_s=contract.summarize(qmed)["median"],
                 plan=plans["index"].get(first, []), check_plan=plans["scan"].get(first, []),
                 planner_plan=plans["planner"].get(first, []),
                 queries_planner_uses_index=sum(_uses_index(p) for p in plans["planner"].values()),
                 queries_parallel=sum(any(n.startswith("Gather") for n in p) for p in plans["index"].values()))
    if not all(_uses_index(p) for p in plans["index"].values()):
        return passes, False, "the timed run did not read the GIN index for every query", extra
    if any(any("Index" in n for n in p) for p in plans["scan"].values()):
        return passes, False, "the sequential-scan check used an index for some query", extra
    if set(got) != set(ns) or set(scan) != set(ns):
        return passes, False, f"answered {len(got)} (index) and {len(scan)} (scan) of {len(ns)} queries", extra
    bad = [j for j in sorted(ns) if got[j] != scan[j]]
    if bad:
        return passes, False, (f"query {bad[0]}: the index returned {len(got[bad[0]])} rows, a sequential scan "
                              f"{len(scan[bad[0]])} ({len(bad)} queries differ)"), extra
    return passes, True, (f"the GIN index's answer ({' / '.join(extra['plan'])}) equals a sequential scan's "
                         f"({' / '.join(extra['check_plan'])}) on all {len(ns)} queries (plans checked for every "
                         f"query)"), extra


def _line(r):
    if r["status"] != "ok":
        return f"pg_trgm: {r['id']}: {r['status']}: {r['reason']}"
    e = r["extra"]
    if r["test"] == "index":
        return f"pg_trgm: {r['id']}: median {r['stats']['kernel_s']['median']:.3f} s, index {e['index_bytes']} bytes"
    return (f"pg_trgm: {r['id']}: median query {e['query_median_s'] * 1e3:.3f} ms, {e['mean_hits_per_query']:.1f} "
            f"hits/query (nsearch {e['nsearch_mean_hits_per_query']:.1f}), jaccard {e['jaccard_mean']:.3f}")


# ----------------------------------------------------------------------------------------------

def parse_args(argv):
    ap = record.argument_parser("pg_trgm", "PostgreSQL pg_trgm as the n-gram peer (docs/peers.md)")
    ap.add_argument("--sizes", default="")
    ap.add_argument("--min-size", default="")
    ap.add_argument("--max-size", default="")
    ap.add_argument("--size-class", type=int, default=0)
    ap.add_argument("--thresholds", default=DEFAULT_THRESHOLDS,
                    help="pg_trgm.word_similarity_threshold values, each a search case")
    ap.add_argument("--pg-errors", default=DEFAULT_ERRORS,
                    help="error levels k whose queries pg_trgm answers (the executables' --errors is not used)")
    ap.add_argument("--pg-query-count", type=int, default=DEFAULT_QUERY_COUNT,
                    help="answer the first N of the benchmark's queries (the same as hdb-ngram-*'s first N)")
    ap.add_argument("--pg-budget", type=float, default=DEFAULT_BUDGET_S,
                    help="seconds for all sizes: a size whose estimate does not fit is skipped with the reason")
    ap.add_argument("--tmp-root", default=None, help="where the cluster's temporary folder goes")
    # The n-gram data options, handed to hdb-export-ngram as they are.
    for opt in ("--corpus", "--gcide-dir", "--queries", "--query-count", "--query-min", "--query-max",
                "--words-per-segment", "--vocabulary", "--zipf"):
        ap.add_argument(opt, default=None)
    a, unknown = ap.parse_known_args(argv)
    a.ignored = unknown
    if a.sizes:
        a.size_list = [contract.parse_size(x, "--sizes") for x in a.sizes.split(",")]
    elif a.min_size and a.max_size:
        a.size_list = contract.pow2_range(contract.parse_size(a.min_size, "--min-size"),
                                          contract.parse_size(a.max_size, "--max-size"))
    elif a.size_class:
        a.size_list = contract.pow2_range(*contract.SIZE_CLASSES[a.size_class])
    else:
        a.size_list = [contract.MiB]
    a.thresholds = [float(x) for x in a.thresholds.split(",")]
    a.levels = sorted({int(x) for x in a.pg_errors.split(",")})
    if not a.size_list or any(not 0 < t <= 1 for t in a.thresholds) or a.passes < 1 or a.pg_query_count < 1:
        raise ValueError("sizes, thresholds in (0, 1], --passes >= 1 and --pg-query-count >= 1 are needed")
    a.harness = record.Harness.from_args(a)
    a.export_tool = str(Path(a.build_dir).absolute() / "tools" / EXPORT_TOOL)
    count = min(a.pg_query_count, int(a.query_count)) if a.query_count else a.pg_query_count
    a.export_args = ["--query-count", str(count)]
    for opt in ("corpus", "gcide_dir", "queries", "query_min", "query_max", "words_per_segment", "vocabulary", "zipf"):
        v = getattr(a, opt)
        if v is not None:
            a.export_args += ["--" + opt.replace("_", "-"), v]
    return a


def main(argv=None):
    try:
        a = parse_args(sys.argv[1:] if argv is None else argv)
    except (ValueError, KeyError) as e:
        print(f"pg_trgm: error: {e}", file=sys.stderr)
        return contract.EXIT_USAGE
    if a.benchmark not in BENCHMARKS:
        print(f"pg_trgm: error: pg_trgm answers {', '.join(BENCHMARKS)}, not '{a.benchmark}'", file=sys.stderr)
        return contract.EXIT_SKIP
    ok, why = available()
    if not ok:
        print(f"pg_trgm: error: {why}", file=sys.stderr)
        return contract.EXIT_SKIP
    if not os.access(a.export_tool, os.X_OK):
        print(f"pg_trgm: error: {a.export_tool} is not built (cmake --build {a.build_dir} --target {EXPORT_TOOL})",
              file=sys.stderr)
        return contract.EXIT_SKIP
    if a.ignored:
        print(f"pg_trgm: options that do not apply to PostgreSQL, ignored: {' '.join(a.ignored)}", flush=True)
    bindir = find_bindir()
    version = subprocess.run([str(Path(bindir, "postgres")), "--version"], capture_output=True,
                             text=True).stdout.strip()
    repo = str(Path(__file__).absolute().parents[3])
    return record.run_guarded("pg_trgm", lambda state: run(a, state, bindir, version, repo))


def size_cases(a):
    """The cases of one size: (test, variant, params)."""
    return [("index", "build", {})] + [("search", "word_similarity", {"k": k, "threshold": t})
                                       for k in a.levels for t in a.thresholds]


def record_rest_of_size(doc, a, size, status, reason):
    """A size that stops (skipped, or an error of the export, the load, the index build): every case
    of it not recorded yet is recorded with that status and reason, so none goes missing and none
    is recorded twice."""
    have = {r["id"] for r in doc.doc["results"]}
    for test, variant, params in size_cases(a):
        case = _case(test, variant, params, size, 0, 0)
        if doc.case_id(case, test, variant, params) in have:
            continue
        if status == "skipped":
            doc.skipped(case, test, variant, params, reason)
        else:
            doc.failed(case, test, variant, params, reason)


def run(a, state, bindir, version, repo):
    """The run (under record.run_guarded: a signal or an error finishes the document); the cluster
    is stopped and its folder removed however it ends."""
    cluster = None
    try:
        threads = query_threads(a.harness)
        ctx = record.context(repo, a.harness, version, threads, extra={"sizes": a.size_list, "peer": {
            "name": NAME, "server": version, "bindir": bindir, "thresholds": a.thresholds, "error_levels": a.levels,
            "queries": int(a.export_args[1]), "operator": "body %> query (word_similarity(query, body) >= threshold)",
            "timed": "server-side clock_timestamp() around each query's SELECT array_agg(id) ... WHERE body %> q "
                     "in a PL/pgSQL loop (no client, socket or psql start-up)",
            "cold": {"index/build": BUILD_COLD_NOTE, "search/word_similarity": SEARCH_COLD_NOTE},
            "settings": {k: v.strip("'") for k, v in server_settings(threads).items()}}})
        doc = state.doc = record.Document("ngram", NAME, ctx, a.json, a.csv)
        remove_stale(a.tmp_root)
        cluster = Cluster(bindir, a.tmp_root, threads)
        print(f"pg_trgm: cluster at {cluster.dir} ({version})", flush=True)
        cluster.start()
        size_state: dict[str, Any] = {}
        started, last = time.monotonic(), None
        for size in sorted(a.size_list):
            try:
                left = a.pg_budget - (time.monotonic() - started)
                if last and last[1] * size / last[0] > left:
                    raise SkipSize(f"pg_trgm at {contract.format_size(size)} would take about "
                                   f"{last[1] * size / last[0]:.0f} s "
                                   f"(scaled from {last[1]:.0f} s at {contract.format_size(last[0])}), more than the "
                                   f"{max(left, 0):.0f} s left of its budget (--pg-budget {a.pg_budget:g})")
                t0 = time.monotonic()
                run_size(a, cluster, doc, size, size_state)
                last = (size, time.monotonic() - t0)
            except SkipSize as e:
                record_rest_of_size(doc, a, size, "skipped", str(e))
                print(f"pg_trgm: {contract.format_size(size)}: skipped: {e}", flush=True)
            except RuntimeError as e:
                record.stopped()
                record_rest_of_size(doc, a, size, "failed", str(e))
                print(f"pg_trgm: {contract.format_size(size)}: failed: {e}", flush=True)
        doc.finish()
        s = doc.doc["summary"]
        print(f"summary: {s['ok']} ok, {s['skipped']} skipped, {s['failed']} failed", flush=True)
        return doc.exit_code()
    finally:
        for s in record.STOP_SIGNALS:
            signal.signal(s, signal.SIG_IGN)  # a second signal must not cut the clean-up short
        if cluster is not None:
            cluster.stop()
            print(f"pg_trgm: cluster stopped, {cluster.dir} removed", flush=True)


if __name__ == "__main__":
    sys.exit(main())
