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

# An output path that is usable on rank 0 only, and a --json path whose directory is missing on
# rank 1: the same agreement.
output_on_one_rank() {
  need HDB_BUS_CPU
  mkdir "$T/out0"
  run 60 "${MPI[@]}" bash -c 'exec "$0" --sizes 32K --csv "$1/out$OMPI_COMM_WORLD_RANK/bus.csv"' "$HDB_BUS_CPU" "$T"
  expect_within 20
  expect_rc 2
  expect_err "rank 1: error: --csv: cannot write '$T/out1/bus.csv.rank1': no directory '$T/out1'"
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
# file size limit (prlimit), so its next write fails; the job ends within seconds with rank 1's
# message, rank 1's file keeps its previous contents, and rank 0's file keeps every result it had
# taken, marked as interrupted.
write_error_on_one_rank() {
  need HDB_BUS_CPU
  command -v prlimit >/dev/null || skip "no prlimit"
  local sizes=32K,64K,128K,256K,512K,1M,2M,4M,8M,16M,32M
  "${MPI[@]}" bash -c 'echo $$ >"$1/pid$OMPI_COMM_WORLD_RANK"; exec "$0" --sizes "$2" --passes 3 --max-time 0.3 \
    --target-noise 0 --json "$1/bus.json"' "$HDB_BUS_CPU" "$T" "$sizes" >"$T/out" 2>"$T/err" &
  local job=$!
  wait_results "$T/bus.json.rank0" 1 60
  wait_results "$T/bus.json.rank1" 1 60
  local before
  before=$(results_in "$T/bus.json.rank0")
  cp "$T/bus.json.rank1" "$T/rank1.before"
  prlimit --pid "$(cat "$T/pid1")" --fsize=1:1 || fail "prlimit"
  local start=$SECONDS
  timeout 60 tail --pid="$job" -f /dev/null
  wait "$job"
  RC=$?
  [ $((SECONDS - start)) -le 30 ] || fail "the job took $((SECONDS - start)) s to end after rank 1 failed"
  expect_rc 1
  expect_err "rank 1: error: cannot write results to '$T/bus.json.rank1': File too large (its previous contents are kept)"
  expect_err "rank 1: stopping every rank (exit code 1)"
  doc "$T/bus.json.rank0" "len(d['results']) >= $before" "rank 0's results were lost"
  doc "$T/bus.json.rank0" "d['complete'] is False and d['incomplete_reason'] == 'interrupted by signal 15'"
  cmp -s "$T/bus.json.rank1" "$T/rank1.before" || {
    # Rank 1 may have written once more between the copy and the limit: still a document of its run.
    doc "$T/bus.json.rank1" "d['complete'] is False and len(d['results']) >= 1"
  }
  expect_no_temp_files "$T"
}

"$1"
echo "ok: $1"
