#!/usr/bin/env bash
# Issue 31: outputs that would land on one file, an output on an input, and inputs that hold nothing
# to process. Each is refused before any work with a usage error naming both options (exit 2, the
# input untouched), or, for an empty input, recorded as a skipped case with its reason: never an
# impossible throughput.
# Usage: edges.sh CASE (env: HDB_BUS_CPU, HDB_NGRAM_CPU, HDB_MERGE_CPU, HDB_RA_CPU)
. "$(dirname "$0")/lib.sh"
QUICK=(--passes 1 --max-passes 1 --warmup 0 --max-time 0.01 --quiet)

# --json and --csv on one file: the same name, a name through '..', a hard link, a symbolic link.
same_output_paths() {
  need HDB_BUS_CPU
  local a b
  mkdir "$T/sub"
  echo keep >"$T/linked.json"
  ln "$T/linked.json" "$T/hard.csv"
  ln -s linked.json "$T/soft.csv"
  for pair in "$T/r.json $T/r.json" "$T/r.json $T/sub/../r.json" "$T/linked.json $T/hard.csv" \
              "$T/linked.json $T/soft.csv"; do
    read -r a b <<<"$pair"
    run 30 "$HDB_BUS_CPU" --sizes 32K "${QUICK[@]}" --json "$a" --csv "$b"
    expect_rc 2
    expect_err "--json '$a' is the same file as --csv '$b'"
    expect_err "give each output its own path"
  done
  [ ! -e "$T/r.json" ] || fail "a refused run made its output"
  [ "$(cat "$T/linked.json")" = keep ] || fail "a refused run wrote over a file"
  # Devices take both: /dev/null stays allowed for both outputs.
  run 60 "$HDB_BUS_CPU" --sizes 32K "${QUICK[@]}" --json /dev/null --csv /dev/null
  expect_rc 0
}

# An output on an input file: the n-gram corpus and query file, the TPC-H --output beside --json.
output_on_input() {
  need HDB_NGRAM_CPU
  printf 'alpha beta gamma delta\nepsilon zeta eta theta\n' >"$T/corpus.txt"
  cp "$T/corpus.txt" "$T/corpus.orig"
  printf 'alpha beta\n' >"$T/queries.txt"
  run 30 "$HDB_NGRAM_CPU" --corpus "$T/corpus.txt" --errors 0 "${QUICK[@]}" --json "$T/corpus.txt"
  expect_rc 2
  expect_err "--json '$T/corpus.txt' is the same file as --corpus '$T/corpus.txt': writing it would destroy the input"
  run 30 "$HDB_NGRAM_CPU" --corpus "$T/corpus.txt" --queries "$T/queries.txt" --errors 0 "${QUICK[@]}" \
    --output "$T/queries.txt"
  expect_rc 2
  expect_err "--output '$T/queries.txt' is the same file as --queries"
  run 30 "$HDB_NGRAM_CPU" --corpus "$T/corpus.txt" --errors 0 "${QUICK[@]}" --output "$T/o.tsv" --csv "$T/o.tsv"
  expect_rc 2
  expect_err "is the same file as --output '$T/o.tsv'"
  cmp -s "$T/corpus.txt" "$T/corpus.orig" || fail "the corpus was changed"
  [ "$(cat "$T/queries.txt")" = "alpha beta" ] || fail "the query file was changed"
}

# A delta of 0 rows: the delta dictionary has nothing to process. Once it reported 7,230 GB/s
# against a 17 GB/s ceiling, ok and verified; now it is skipped with the reason, and the cases that
# have work (the merge of the main's dictionary with an empty delta's) still run and are verified.
empty_delta() {
  need HDB_MERGE_CPU
  run 120 "$HDB_MERGE_CPU" --sizes 1M --types u32 --unique 1 --delta 0 "${QUICK[@]}" --json "$T/m.json"
  expect_rc 0
  doc "$T/m.json" "all(r['status'] == 'skipped' and 'nothing to process' in r['reason']
                       for r in d['results'] if r['test'] == 'delta_dict')" "delta_dict with an empty delta is not skipped"
  doc "$T/m.json" "any(r['test'] == 'delta_dict' for r in d['results'])" "no delta_dict case"
  doc "$T/m.json" "all(r['verification']['verified'] for r in d['results'] if r['status'] == 'ok')"
  doc "$T/m.json" "any(r['status'] == 'ok' for r in d['results'])" "no case with work ran"
  # No recorded figure is above the run's copy ceiling by more than the cache can give (10x).
  doc "$T/m.json" "all(r['throughput']['moved_gbps'] < 10 * d['ceiling']['memory_copy_gbps']
                       for r in d['results'] if r['status'] == 'ok')" "a throughput far above the ceiling"
}

# A size smaller than one tuple: no rows, skipped with the reason (not a result of nothing).
size_below_one_tuple() {
  need HDB_RA_CPU
  run 60 "$HDB_RA_CPU" --sizes 4 --only 'select/serial,reduce/serial' "${QUICK[@]}" --json "$T/r.json"
  expect_rc 0
  doc "$T/r.json" "len(d['results']) >= 2 and all(r['status'] == 'skipped' and 'nothing to process' in r['reason']
                                                  for r in d['results'])"
}

"$1"
echo "ok: $1"
