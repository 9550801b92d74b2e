# Helpers of the fault suite (sourced by tests/fault/*.sh). Every case runs in a temporary directory
# of its own ($T, removed at exit), every command under `timeout`, and asserts the exit code, the
# message and what the files hold afterwards. Exit 77 is a skip (CTest's SKIP_RETURN_CODE).
set -uo pipefail

PY="${HDB_PYTHON:-python3}"
T=$(mktemp -d "${TMPDIR:-/tmp}/hdb-fault-XXXXXX") || exit 1
cleanup() {
  # Background jobs of a failed case first, then the folder.
  local j
  for j in $(jobs -p); do kill "$j" 2>/dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  for f in "$T/out" "$T/err"; do
    [ -s "$f" ] && { echo "--- ${f##*/}:" >&2; tail -n 40 "$f" >&2; }
  done
  exit 1
}
skip() {
  echo "SKIP: $*"
  exit 77
}

# run SECONDS CMD...: runs CMD with stdout in $T/out, stderr in $T/err; its exit code in RC and
# its wall time in SECS.
run() {
  local limit=$1 start end
  shift
  start=$(date +%s.%N)
  timeout -k 5 "$limit" "$@" >"$T/out" 2>"$T/err"
  RC=$?
  end=$(date +%s.%N)
  SECS=$("$PY" -c "print(round($end - $start, 2))")
  return 0
}

expect_rc() {
  local want
  for want in "$@"; do [ "$RC" = "$want" ] && return 0; done
  fail "exit code $RC, expected $*"
}
# The command ended on its own within SECONDS (not by the timeout).
expect_within() {
  [ "$RC" != 124 ] && [ "$RC" != 137 ] || fail "still running after the time limit (hang)"
  "$PY" -c "import sys; sys.exit(0 if $SECS <= $1 else 1)" || fail "took ${SECS}s, more than $1s"
}
expect_err() { grep -qF -- "$1" "$T/err" || fail "stderr does not say: $1"; }
expect_no_err() { ! grep -qF -- "$1" "$T/err" || fail "stderr says: $1"; }
expect_out() { grep -qF -- "$1" "$T/out" || fail "stdout does not say: $1"; }

# doc FILE EXPR [WHAT]: EXPR (Python, the parsed JSON document is `d`) holds for FILE.
doc() {
  "$PY" - "$1" "$2" <<'EOF' || fail "${3:-$1: $2}"
import json, sys
path, expr = sys.argv[1], sys.argv[2]
try:
    with open(path) as f:
        d = json.load(f)
except Exception as e:
    print(f"{path}: not a JSON document: {e}", file=sys.stderr)
    sys.exit(1)
ok = eval(expr, {"d": d, "len": len, "all": all, "any": any})
if not ok:
    print(f"{path}: {expr} is false; complete={d.get('complete')!r} "
          f"reason={d.get('incomplete_reason')!r} results={len(d.get('results', []))}", file=sys.stderr)
sys.exit(0 if ok else 1)
EOF
}

# The number of results in a JSON document (0 while it does not exist or is not complete text).
results_in() {
  "$PY" -c "import json,sys
try: print(len(json.load(open(sys.argv[1]))['results']))
except Exception: print(0)" "$1"
}

# wait_results FILE N SECONDS: waits until FILE holds at least N results.
wait_results() {
  local i
  for ((i = 0; i < $3 * 10; ++i)); do
    [ "$(results_in "$1")" -ge "$2" ] && return 0
    sleep 0.1
  done
  fail "$1 did not reach $2 result(s) in $3 s"
}

# No temporary file is left beside the results.
expect_no_temp_files() {
  local left
  left=$(find "$@" -name '*.tmp' 2>/dev/null)
  [ -z "$left" ] || fail "temporary files left: $left"
}

need() {
  local v
  for v in "$@"; do
    [ -n "${!v:-}" ] && [ -x "${!v}" ] || skip "$v is not built"
  done
}
