#!/usr/bin/env bash
# Issue 15, item 1: one MPI rank that fails must end the whole job within seconds, non-zero, with
# that rank's message; no rank waits forever in a collective, and no result already taken is lost.
# Usage: mpi.sh CASE (env: MPIEXEC, HDB_BUS_CPU, HDB_NGRAM_CPU)
. "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
[ -n "${MPIEXEC:-}" ] || skip "no mpirun"
MPI=("$MPIEXEC" --oversubscribe -np 2)

# A bad option on rank 1 only: rank 0 would wait for it at the first collective.
option_on_one_rank() {
  need HDB_BUS_CPU
  run 60 "${MPI[@]}" bash -c 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then exec "$0" --bogus; else exec "$0" --sizes 32K --json "$1"; fi' \
    "$HDB_BUS_CPU" "$T/bus.json"
  expect_within 20
  expect_rc 2
  expect_err "rank 1: error: The following argument was not expected: --bogus"
  expect_err "rank 0: the run stops on every rank: rank 1 failed (exit code 2)"
  [ ! -e "$T/bus.json" ] || fail "a merged document was written for a run that never started"
}

# An input file that exists for rank 0 only (a file on one node): found while checking the
# options, agreed on before any rank starts, every rank stops with exit code 2.
file_on_one_rank() {
  need HDB_NGRAM_CPU
  printf 'the quick brown fox jumps over the lazy dog\nan article about approximate text search\n' >"$T/corpus0.txt"
  run 60 "${MPI[@]}" bash -c 'exec "$0" --corpus "$1/corpus$OMPI_COMM_WORLD_RANK.txt" --sizes 32K --json "$1/ngram.json"' \
    "$HDB_NGRAM_CPU" "$T"
  expect_within 20
  expect_rc 2
  expect_err "rank 1: error: --corpus: cannot open '$T/corpus1.txt'"
  expect_no_err "rank 0: error"
}

# A rank file whose directory is missing on rank 1 (issue 20: rank files are best effort): rank 1
# warns and keeps no file of its own, rank 0 receives its results over MPI and writes them.
output_on_one_rank() {
  need HDB_BUS_CPU
  mkdir "$T/out0"
  run 60 "${MPI[@]}" bash -c 'exec "$0" --sizes 32K --csv "$1/out$OMPI_COMM_WORLD_RANK/bus.csv"' "$HDB_BUS_CPU" "$T"
  expect_within 20
  expect_rc 0
  expect_err "rank 1 ($(hostname)): warning: --csv: cannot write '$T/out1/bus.csv.rank1': no directory '$T/out1'; this rank keeps no file of its own (rank 0 receives its results over MPI)"
  "$PY" -c "import csv, sys; rows = list(csv.DictReader(open(sys.argv[1]))); sys.exit(0 if {r['rank'] for r in rows} == {'0', '1'} else 1)" \
    "$T/out0/bus.csv" || fail "the merged CSV lacks a rank's rows"
}

# A rank that fails after the ranks have started working (n-gram --output is opened when the
# benchmark starts, after the agreement): it writes its file, tells its error and ends the job
# (MPI_Abort); rank 0 is interrupted (SIGTERM) and its file is marked so.
error_after_start() {
  need HDB_NGRAM_CPU
  mkdir "$T/d0"
  run 120 "${MPI[@]}" bash -c 'exec "$0" --corpus synthetic --sizes 32K,64K,128K,256K,512K,1M,2M,4M --max-time 0.2 \
    --json "$1/ngram.json" --output "$1/d$OMPI_COMM_WORLD_RANK/hits.tsv"' "$HDB_NGRAM_CPU" "$T"
  expect_within 30
  expect_rc 2
  expect_err "rank 1: error: --output: cannot write '$T/d1/hits.tsv'"
  expect_err "rank 1: stopping every rank (exit code 2)"
  doc "$T/ngram.json.rank0" "d['complete'] is False"
  doc "$T/ngram.json.rank1" "d['complete'] is False and d['incomplete_reason'].startswith('stopped by an error: --output')"
  expect_no_temp_files "$T"
}

# A full disk on one node in the middle of the run: once rank 0 has results on disk, rank 1 gets a
# file size limit (prlimit), so its next write fails. Rank files are best effort (issue 20): rank 1
# warns once and writes no more files of its own, its file keeps its previous contents, and the run
# goes on; rank 0 receives every rank's results over MPI and the merged document has them all.
write_error_on_one_rank() {
  need HDB_BUS_CPU
  command -v prlimit >/dev/null || skip "no prlimit"
  local sizes=32K,64K,128K,256K,512K,1M,2M,4M,8M,16M,32M
  "${MPI[@]}" bash -c 'echo $$ >"$1/pid$OMPI_COMM_WORLD_RANK"; exec "$0" --sizes "$2" --passes 3 --max-time 0.3 \
    --target-noise 0 --json "$1/bus.json"' "$HDB_BUS_CPU" "$T" "$sizes" >"$T/out" 2>"$T/err" &
  local job=$!
  wait_results "$T/bus.json.rank0" 1 60
  wait_results "$T/bus.json.rank1" 1 60
  cp "$T/bus.json.rank1" "$T/rank1.before"
  prlimit --pid "$(cat "$T/pid1")" --fsize=1:1 || fail "prlimit"
  timeout 120 tail --pid="$job" -f /dev/null
  wait "$job"
  RC=$?
  expect_rc 0
  expect_err "rank 1 ($(hostname)): warning: cannot write results to '$T/bus.json.rank1': File too large (its previous contents are kept); this rank writes no more files of its own"
  [ "$(grep -c "warning: cannot write" "$T/err")" = 1 ] || fail "the warning is not told once"
  local kept
  kept=$(results_in "$T/bus.json.rank1")
  doc "$T/bus.json" "d['complete'] is True and len(d['mpi']['ranks'][1]['results']) > $kept" "rank 1's later results did not reach rank 0"
  cmp -s "$T/bus.json.rank1" "$T/rank1.before" || {
    # Rank 1 may have written once more between the copy and the limit: still a document of its run.
    doc "$T/bus.json.rank1" "d['complete'] is False and len(d['results']) >= 1"
  }
  expect_no_temp_files "$T"
}

"$1"
echo "ok: $1"
