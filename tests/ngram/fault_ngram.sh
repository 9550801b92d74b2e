#!/bin/bash
# Scripted fault reproductions for the n-gram inputs (issue 15, items 7 and 10).
#   fault_ngram.sh CASE HDB_NGRAM_CPU
# Each case works in a temporary directory of its own and bounds every run with `timeout`.
set -u
case_name=$1 exe=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/hdb-fault-ngram.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL ($case_name): $*"; [ -f "$work/err" ] && { echo "--- stderr:"; head -c 2000 "$work/err"; echo; }; exit 1; }
run() {  # run SECONDS ARGS...: exit code in $rc, stdout in $work/out, stderr in $work/err
  local t=$1
  shift
  timeout "$t" "$exe" "$@" >"$work/out" 2>"$work/err"
  rc=$?
  [ $rc -ge 124 ] && fail "exit $rc (timeout or signal) running $*"
  return 0
}
expect_usage() {  # exit 2 with PATTERN on stderr, a short message
  [ $rc -eq 2 ] || fail "exit $rc, expected 2"
  grep -q -- "$1" "$work/err" || fail "stderr lacks '$1'"
  [ "$(wc -c <"$work/err")" -lt 1000 ] || fail "a message of $(wc -c <"$work/err") bytes"
}
docs() {  # a small corpus: 40 lines of words
  for i in $(seq 1 40); do echo "article $i holds the words search index gathering pruning kernel $((i * 7)) memory"; done
}
tiny=(--sizes 64K --errors 0,2 --passes 1 --max-passes 1 --max-time 0.1 --only 'search/baseline')

case "$case_name" in
  query_count)
    # A huge --query-count is refused up front (no memory grows): within 20 s under 1 GB.
    for n in 1e8 100000000 10001; do
      (ulimit -v $((1024 * 1024)) 2>/dev/null; exec timeout 20 "$exe" --corpus synthetic --query-count $n "${tiny[@]}") \
        >"$work/out" 2>"$work/err"
      rc=$?
      grep -q AddressSanitizer "$work/err" && { echo "note: sanitizer build, run without the limit"; run 20 --corpus synthetic --query-count $n "${tiny[@]}"; }
      [ $rc -ge 124 ] && fail "exit $rc for --query-count $n"
      # 1e8 may not even parse as a count (CLI11 refuses it); either way a usage error naming the option.
      if [ "$n" = 1e8 ]; then expect_usage "--query-count"; else expect_usage "--query-count: at most 10000"; fi
    done
    run 60 --corpus synthetic --query-count 10000 --errors 0 --sizes 16K --passes 1 --max-passes 1 --only 'search/baseline'
    [ $rc -eq 0 ] || fail "exit $rc for --query-count 10000"
    ;;
  query_file_limits)
    docs >"$work/docs.txt"
    seq 1 10001 | sed 's/^/query /' >"$work/many.txt"
    run 30 --corpus "$work/docs.txt" --queries "$work/many.txt" "${tiny[@]}"
    expect_usage "many.txt:10001: more than 10000 queries"
    head -c $((16 << 20)) /dev/zero | tr '\0' 'a' >"$work/long.txt"  # one 16 MiB line, no newline
    run 30 --corpus "$work/docs.txt" --queries "$work/long.txt" "${tiny[@]}"
    expect_usage "long.txt:1: a query of 16777216 bytes; at most 65536"
    ;;
  corpus_long_junk_line)
    # A 16 MiB line with no letter or digit is dropped: it neither ends the loading nor counts.
    { head -c $((16 << 20)) /dev/zero | tr '\0' '-'; echo; docs; } >"$work/docs.txt"
    echo "search index" >"$work/q.txt"
    run 60 --corpus "$work/docs.txt" --queries "$work/q.txt" --json "$work/r.json" "${tiny[@]}"
    [ $rc -eq 0 ] || fail "exit $rc"
    grep -q '"articles": 40' "$work/r.json" || fail "not the 40 articles: $(grep -o '"articles": [0-9]*' "$work/r.json" | head -1)"
    ;;
  crlf)
    # CRLF files give the same corpus, queries and hits as LF files.
    docs >"$work/lf.txt"
    printf 'search index\nkernel 14\nmemory\n' >"$work/q-lf.txt"
    sed 's/$/\r/' "$work/lf.txt" >"$work/crlf.txt"
    sed 's/$/\r/' "$work/q-lf.txt" >"$work/q-crlf.txt"
    for v in lf crlf; do
      run 60 --corpus "$work/$v.txt" --queries "$work/q-$v.txt" --json "$work/$v.json" --output "$work/$v.tsv" "${tiny[@]}"
      [ $rc -eq 0 ] || fail "exit $rc for $v"
    done
    cmp -s "$work/lf.tsv" "$work/crlf.tsv" || fail "different hits: $(diff "$work/lf.tsv" "$work/crlf.tsv" | head -5)"
    a=$(grep -o '"text_bytes": [0-9]*' "$work/lf.json" | head -1) b=$(grep -o '"text_bytes": [0-9]*' "$work/crlf.json" | head -1)
    [ -n "$a" ] && [ "$a" = "$b" ] || fail "text_bytes '$a' (LF) and '$b' (CRLF)"
    ;;
  *)
    fail "unknown case"
    ;;
esac
echo "ok: $case_name"
