#!/usr/bin/env bash
# Issue 15, item 9 (the C++ part): seeds above 32 bits, the PoCL kernel cache (an unwritable one is
# named; the default is per user), n-gram --output escaping, and tests that use temporary
# directories of their own.
# Usage: smaller.sh CASE (env: HDB_BUS_CPU, HDB_BUS_OPENCL, HDB_NGRAM_CPU, HDB_TEST_HARNESS)
. "$(dirname "$0")/lib.sh"
QUICK=(--sizes 32K --passes 1 --max-passes 1 --warmup 0 --max-time 0.01 --quiet)

seed_range() {
  need HDB_BUS_CPU
  run 30 "$HDB_BUS_CPU" "${QUICK[@]}" --seed 18446744073709551616
  expect_rc 2
  expect_err "--seed: 18446744073709551616 is larger than the largest seed, 18446744073709551615 (2^64-1)"
  run 30 "$HDB_BUS_CPU" "${QUICK[@]}" --seed -1
  expect_rc 2
  expect_err "--seed: '-1' is not an integer in 0..18446744073709551615"
  # The full range is taken as it is, and recorded as it is.
  for s in 4294967297 18446744073709551615; do
    run 30 "$HDB_BUS_CPU" "${QUICK[@]}" --seed "$s" --json "$T/seed.json"
    expect_rc 0
    doc "$T/seed.json" "d['context']['seed'] == $s" "seed $s was not recorded as given"
  done
}

# POCL_CACHE_DIR that cannot be made (a regular file stands in its path, so this holds for root
# too): an error naming the directory, not "no OpenCL device".
pocl_unwritable_cache() {
  need HDB_BUS_OPENCL
  : >"$T/file"
  POCL_CACHE_DIR="$T/file/cache" run 60 "$HDB_BUS_OPENCL" "${QUICK[@]}"
  expect_rc 1
  expect_err "POCL_CACHE_DIR '$T/file/cache': cannot create '$T/file/cache'"
  expect_err "set POCL_CACHE_DIR to a writable directory"
  expect_no_err "no OpenCL device"
}

# Without POCL_CACHE_DIR the cache is the user's: $XDG_CACHE_HOME/hetdb-bench/pocl, else
# ~/.cache/hetdb-bench/pocl, else $TMPDIR/hdb-pocl-cache-<uid>; never a directory every user shares.
pocl_default_cache() {
  need HDB_BUS_OPENCL
  env -u POCL_CACHE_DIR XDG_CACHE_HOME="$T/xdg" timeout 300 "$HDB_BUS_OPENCL" "${QUICK[@]}" >"$T/out" 2>"$T/err"
  RC=$?
  [ "$RC" = 77 ] && skip "no OpenCL device: $(cat "$T/out")"
  expect_rc 0
  [ -d "$T/xdg/hetdb-bench/pocl" ] || fail "no cache under \$XDG_CACHE_HOME/hetdb-bench/pocl"
  [ "$(stat -c %a "$T/xdg/hetdb-bench/pocl")" = 700 ] || fail "the cache directory is not private to its user"
  mkdir "$T/home"
  env -u POCL_CACHE_DIR -u XDG_CACHE_HOME HOME="$T/home" timeout 300 "$HDB_BUS_OPENCL" "${QUICK[@]}" >"$T/out" 2>"$T/err"
  RC=$?
  expect_rc 0
  [ -d "$T/home/.cache/hetdb-bench/pocl" ] || fail "no cache under ~/.cache/hetdb-bench/pocl"
  # A home that cannot be written (a user like nobody): the user's own directory in $TMPDIR.
  : >"$T/not-a-home"
  mkdir "$T/tmp"
  env -u POCL_CACHE_DIR -u XDG_CACHE_HOME HOME="$T/not-a-home" TMPDIR="$T/tmp" timeout 300 "$HDB_BUS_OPENCL" "${QUICK[@]}" \
    >"$T/out" 2>"$T/err"
  RC=$?
  expect_rc 0
  [ -d "$T/tmp/hdb-pocl-cache-$(id -u)" ] || fail "no cache in \$TMPDIR/hdb-pocl-cache-<uid> when the home is not writable"
}

# Queries with a TAB, a backslash and a carriage return: one line per query in --output, the
# fields escaped as the header line says.
ngram_output_escaping() {
  need HDB_NGRAM_CPU
  printf 'tab\there\nback\\slash\ncarriage\rreturn here\n' >"$T/queries.txt"
  run 120 "$HDB_NGRAM_CPU" --corpus synthetic --queries "$T/queries.txt" --errors 0 "${QUICK[@]}" --output "$T/hits.tsv"
  expect_rc 0
  "$PY" - "$T/hits.tsv" <<'EOF' || fail "--output does not escape its queries"
import sys
lines = open(sys.argv[1], newline="").read().split("\n")
assert lines[-1] == "", "no newline at the end"
header, rows = lines[0], [l for l in lines[1:-1]]
assert header.startswith("# size_bytes\terror_level\tquery_index\tquery (escaped: \\\\ backslash, \\t tab, \\n newline, \\r carriage return)\thits"), header
queries = [r.split("\t")[3] for r in rows]
assert all(len(r.split("\t")) == 5 for r in rows), rows
for want in ["tab\\there", "back\\\\slash", "carriage\\rreturn here"]:
    assert want in queries, (want, queries)
assert all("\r" not in r for r in rows)
EOF
}

# The harness's unit tests write only under a directory of their own: the fixed names they once
# used, taken by someone else (here: directories where files were expected), do not disturb them.
tests_own_temp_dirs() {
  need HDB_TEST_HARNESS
  mkdir "$T/hdb_session_test.json" "$T/hdb_session_list_test.json" "$T/hdb_results_test.json"
  TEST_TMPDIR="$T" run 120 "$HDB_TEST_HARNESS" --gtest_filter='Session.*:Results.*'
  expect_rc 0
  local left
  left=$(find "$T" -mindepth 1 -maxdepth 1 ! -name 'hdb_*' ! -name out ! -name err)
  [ -z "$left" ] || fail "left behind in the temporary directory: $left"
}

"$1"
echo "ok: $1"
