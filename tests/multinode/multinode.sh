#!/usr/bin/env bash
# Issue 20: MPI across nodes, on a simulated two-node cluster (cluster.sh: two network namespaces
# joined by a veth pair, Open MPI's daemon started on node b through its rsh agent, TCP restricted
# to the veth). Each case builds its own cluster and tears it down at exit, also on failure; where
# no namespace can be made it is skipped (77) with the reason.
# Usage: multinode.sh CASE (env: MPIEXEC, HDB_BUS_CPU, HDB_DIST_CPU, HDB_PYTHON)
. "$(dirname "$0")/../fault/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[ -n "${MPIEXEC:-}" ] || skip "no mpirun"

C="$T/cluster"
teardown() {
  "$here/cluster.sh" down "$C" || true
  cleanup
}
trap teardown EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

HDB_MN_OWNER=$$ "$here/cluster.sh" up "$C" >"$T/up" 2>&1
case $? in
0) ;;
77) skip "$(sed 's/^SKIP: //' "$T/up")" ;;
*) cat "$T/up" >&2; fail "the cluster could not be made" ;;
esac
read -r -a MPIARGS <"$C/mpi-args"
# mpirun on node a; --map-by node puts ranks 0, 2 on node a and 1, 3 on node b.
on_cluster() {
  local limit=$1 np=$2
  shift 2
  run "$limit" "$here/cluster.sh" exec "$C" "$MPIEXEC" -np "$np" --hostfile "$C/hosts" --map-by node "${MPIARGS[@]}" "$@"
}
BUS=(--sizes 32K,256K --passes 2 --max-time 0.05)
DIST=(--sizes 32K --passes 2 --max-time 0.05)

# Results from both hosts, every rank's results verified, the mode that ran.
expect_two_hosts() {  # FILE NP MODE
  "$PY" "$repo/tests/check_results.py" "$1" --ranks "$2" >"$T/check" 2>&1 || { cat "$T/check" >&2; fail "check_results $1"; }
  doc "$1" "d['mpi']['mode'] == '$3'"
  doc "$1" "sorted(h['host'] for h in d['mpi']['hosts']) == ['hdb-node-a', 'hdb-node-b']" "results are not from both hosts"
  doc "$1" "[h['ranks'] for h in d['mpi']['hosts']] == [list(range(0, $2, 2)), list(range(1, $2, 2))]" "ranks per host"
  doc "$1" "all(e['host'] == ('hdb-node-a' if e['rank'] % 2 == 0 else 'hdb-node-b') for e in d['mpi']['ranks'])"
  doc "$1" "all(r['status'] != 'ok' or r['verification']['verified'] for e in d['mpi']['ranks'] for r in e['results'])"
}

# EXE on 2 and 4 ranks across the nodes: each merged document has results from both hosts, all
# verified, and records MODE. across_nodes MODE EXE ARGS...
across_nodes() {
  local mode=$1 exe=$2 np
  shift 2
  for np in 2 4; do
    on_cluster 150 "$np" "$exe" "$@" --json "$T/$mode$np.json" --csv "$T/$mode$np.csv"
    expect_rc 0
    expect_two_hosts "$T/$mode$np.json" "$np" "$mode"
    echo "$mode: $np ranks in ${SECS}s"
  done
}

# EP: every rank runs the bus benchmark on its node; rank 0 gathers over MPI.
ep() {
  need HDB_BUS_CPU
  across_nodes ep "$HDB_BUS_CPU" "${BUS[@]}"
}

# TP: the dist benchmark's exchange crosses the veth; the bytes that left each node are recorded.
tp() {
  need HDB_DIST_CPU
  across_nodes tp "$HDB_DIST_CPU" "${DIST[@]}"
  local np
  for np in 2 4; do
    doc "$T/tp$np.json" "all(r['extra']['nodes'] == 2 and r['extra']['off_node_bytes'] > 0 and len(r['extra']['sent_bytes_per_rank']) == $np for r in d['results'] if r['test'] != 'table_merge')" "off-node bytes"
  done
}

# The output directory is missing on node b: ranks there warn and keep no file of their own; rank 0
# still receives every rank's results over MPI, and the run succeeds (EP and TP, 4 ranks).
missing_dir() {
  need HDB_BUS_CPU
  need HDB_DIST_CPU
  local name exe
  for name in bus dist; do
    exe=HDB_${name^^}_CPU
    local args=("${BUS[@]}")
    [ "$name" = dist ] && args=("${DIST[@]}")
    mkdir -p "$T/$name/raw"
    HDB_MN_HIDE="$T/$name" on_cluster 150 4 "${!exe}" "${args[@]}" --json "$T/$name/raw/x.json" --csv "$T/$name/raw/x.csv"
    expect_within 120
    expect_rc 0
    expect_err "rank 1 (hdb-node-b): warning: --json: cannot write '$T/$name/raw/x.json.rank1': no directory '$T/$name/raw'; this rank keeps no file of its own (rank 0 receives its results over MPI)"
    expect_err "rank 3 (hdb-node-b): warning: --csv"
    expect_no_err "error"
    [ -e "$T/$name/raw/x.json.rank0" ] && [ -e "$T/$name/raw/x.json.rank2" ] || fail "node a's rank files are missing"
    [ ! -e "$T/$name/raw/x.json.rank1" ] || fail "node b wrote into the directory it should not see"
    expect_two_hosts "$T/$name/raw/x.json" 4 "$([ "$name" = dist ] && echo tp || echo ep)"
    doc "$T/$name/raw/x.json" "all(len(e['results']) > 0 for e in d['mpi']['ranks'])" "a rank's results were lost"
    echo "missing_dir: $name in ${SECS}s"
  done
}

# A rank on node b fails before its first collective: (1) it dies before MPI starts (a wrapper
# exits 3 in rank 3's place), (2) it rejects an option. Either way the job ends within seconds
# with a failure, the failing rank's message is told, and no merged document claims success.
early_failure() {
  need HDB_BUS_CPU
  need HDB_DIST_CPU
  local exe
  for exe in "$HDB_BUS_CPU" "$HDB_DIST_CPU"; do
    on_cluster 90 4 bash -c 'if [ "$OMPI_COMM_WORLD_RANK" = 3 ]; then echo "rank 3 on $(hostname): dies before MPI starts" >&2; exit 3; fi
      exec "$0" "$@"' "$exe" "${DIST[@]}" --json "$T/early.json"
    expect_within 60
    [ "$RC" != 0 ] || fail "a rank died and the job exited 0"
    expect_err "rank 3 on hdb-node-b: dies before MPI starts"
    [ ! -e "$T/early.json" ] || fail "a merged document was written for a job that lost a rank"
    on_cluster 90 4 bash -c 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then exec "$0" --bogus; fi; exec "$0" "$@"' \
      "$exe" "${DIST[@]}" --json "$T/early.json"
    expect_within 60
    expect_rc 2
    expect_err "rank 1: error: The following argument was not expected: --bogus"
    expect_err "rank 0: the run stops on every rank: rank 1 failed (exit code 2)"
    [ ! -e "$T/early.json" ] || fail "a merged document was written for a run that never started"
    echo "early_failure: ${exe##*/}"
  done
}

# The driver across the two nodes: --hostfile and --mpi-args, a scaling sweep 1,2,4 of the dist
# benchmark (strong scaling) with its report, the hosts and ranks per host in run.json.
driver() {
  need HDB_DIST_CPU
  local bin
  bin=$(dirname "$HDB_DIST_CPU")
  run 170 "$here/cluster.sh" exec "$C" "$repo/scripts/run-all" --no-setup --no-build --build-dir "$(dirname "$bin")" \
    --out "$T/runs" --benchmarks dist --backends cpu --sizes 32K --passes 2 --timeout 120 \
    --mpi 1,2,4 --hostfile "$C/hosts" --mpi-args "--map-by node ${MPIARGS[*]}"
  expect_rc 0
  local scaling
  scaling=$(ls -d "$T"/runs/*-scaling)
  [ -f "$scaling/scaling.md" ] || fail "no scaling.md"
  grep -q "sent per rank" "$scaling/scaling.md" || fail "scaling.md lacks the bytes each rank sent"
  local run4
  run4=$(grep -l '"ranks": 4' "$T"/runs/*/run.json | head -n1)
  doc "$run4" "d['mpi_launch']['hostfile'] == '$C/hosts'"
  doc "$run4" "[h['ranks'] for h in d['entries'][0]['mpi_hosts']] == [[0, 2], [1, 3]]" "ranks per host in run.json"
  echo "driver: sweep in ${SECS}s"
  # A node that cannot be reached (no such address in the cluster): a failure within seconds, with
  # Open MPI's reason, never a success or a hang.
  printf '10.77.0.1 slots=2\n10.77.0.3 slots=2\n' >"$T/badhosts"
  run 60 "$here/cluster.sh" exec "$C" "$repo/scripts/run-all" --no-setup --no-build --build-dir "$(dirname "$bin")" \
    --out "$T/bad" --benchmarks dist --backends cpu --sizes 32K --mpi 4 --hostfile "$T/badhosts" \
    --mpi-args "--map-by node ${MPIARGS[*]}"
  expect_within 40
  expect_rc 1
  doc "$(ls "$T"/bad/*/run.json)" "d['entries'][0]['status'] == 'failed' and d['entries'][0]['reason'].startswith('exit 255: mpirun: ORTE was unable to reliably start')"
}

declare -F "${1:-}" >/dev/null || fail "no case '${1:-}' (ep, tp, missing_dir, early_failure, driver)"
"$1"
echo "ok: $1"
