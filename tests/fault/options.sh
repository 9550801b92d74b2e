#!/usr/bin/env bash
# Issue 50, item 8 (and the neighbours of item 6): options of hdb-tpch-* and hdb-ssb-* checked alike,
# empty values refused, --platform's index, and --list that converts nothing. Each bad value exits 2
# with a message naming the option.
# Usage: options.sh CASE (env: HDB_TPCH_CPU, HDB_SSB_CPU, HDB_RA_CPU, HDB_RA_OPENCL, HDB_NGRAM_CPU)
. "$(dirname "$0")/lib.sh"

# --sf beside tables read from files: one shared check, the same message for both benchmarks.
table_source() {
  need HDB_TPCH_CPU HDB_SSB_CPU
  mkdir "$T/tbl" "$T/pq"
  for t in lineorder date customer supplier part orders lineitem; do : >"$T/tbl/$t.tbl"; done
  : >"$T/pq/customer.parquet"
  for from in "--tbl-dir $T/tbl" "--tables $T/pq"; do
    # shellcheck disable=SC2086
    run 30 "$HDB_TPCH_CPU" --data tpch $from --sf 2 --list
    expect_rc 2
    expect_err "--sf: the tables come from ${from%% *}, at the scale factor they were made at; --sf is the built-in generator's"
    # shellcheck disable=SC2086
    run 30 "$HDB_SSB_CPU" $from --sf 2 --list
    expect_rc 2
    expect_err "--sf: the tables come from ${from%% *}, at the scale factor they were made at; --sf is the built-in generator's"
  done
  run 30 "$HDB_TPCH_CPU" --data tpch --tbl-dir "$T/tbl" --tables "$T/pq" --list
  expect_rc 2
  expect_err "--tbl-dir and --tables: give one of them"
  # TPC-H's --sf beside random relations only: no table is generated, so it would change nothing.
  run 30 "$HDB_TPCH_CPU" --data random --sf 2 --list
  expect_rc 2
  expect_err "--sf: the scale factor of the generated TPC-H tables; --data random makes none"
  run 30 "$HDB_TPCH_CPU" --data random,tpch --sf 0.01 --sizes 32K --list
  expect_rc 0
}

# A query named twice would give two cases one id.
repeated_queries() {
  need HDB_SSB_CPU
  for q in 1.1,1.1 q1.1,1.1 2.1,Q2.1; do
    run 30 "$HDB_SSB_CPU" --sf 0.01 --queries "$q" --list
    expect_rc 2
    expect_err "--queries: ${q##*[,qQ]} is given twice (each query is one case)"
  done
  run 30 "$HDB_SSB_CPU" --sf 0.01 --queries 1.1,1.2 --list
  expect_rc 0
}

# The same for every option that lists values: a value given twice would make two cases of one id.
repeated_values() {
  need HDB_RA_CPU HDB_TPCH_CPU HDB_MERGE_CPU
  for a in "--sizes 32K,32768:--sizes: 32768 is given twice (32K" "--key-bits 32,32:--key-bits: 32 is given twice" \
           "--selectivity 0.5,0.50:--selectivity: 0.5 is given twice" "--dist uniform,uniform:--dist: uniform is given twice" \
           "--input sorted,sorted:--input: sorted is given twice" "--fanout 2,2:--fanout: 2 is given twice"; do
    # shellcheck disable=SC2086
    run 30 "$HDB_RA_CPU" --list ${a%%:*}
    expect_rc 2
    expect_err "${a#*:}"
  done
  run 30 "$HDB_TPCH_CPU" --sizes 32K --list --kernels A,B,A
  expect_rc 2
  expect_err "--kernels: A is given twice (each value is a case of its own)"
  run 30 "$HDB_MERGE_CPU" --sizes 32K --list --types u32,u64,u32
  expect_rc 2
  expect_err "--types: u32 is given twice"
}

# An empty value is refused, never taken as the option's default (--memory-limit '' ran unlimited,
# --queries '' ran every query, --tbl-dir '' the generator).
empty_values() {
  need HDB_RA_CPU HDB_SSB_CPU HDB_TPCH_CPU
  for opt in --memory-limit --sizes --min-size --max-size --seed --json --csv; do
    run 30 "$HDB_RA_CPU" --only select/serial --list "$opt" ""
    expect_rc 2
    expect_err "$opt: an empty value"
  done
  for opt in --queries --tbl-dir --tables; do
    run 30 "$HDB_SSB_CPU" --list "$opt" ""
    expect_rc 2
    expect_err "$opt: an empty value"
  done
  for opt in --tbl-dir --tables --output; do
    run 30 "$HDB_TPCH_CPU" --list "$opt" ""
    expect_rc 2
    expect_err "$opt: an empty value"
  done
  if [ -x "${HDB_NGRAM_CPU:-}" ]; then
    for opt in --queries --output --gcide-dir; do
      run 30 "$HDB_NGRAM_CPU" --list "$opt" ""
      expect_rc 2
      expect_err "$opt: an empty value"
    done
  fi
}

# A negative count held unsigned wrapped around (--vocabulary -3 ran with 2^64 - 3 words; --query-count -1
# was "at most 10000"): refused as not a whole number, as is a negative --device.
signed_counts() {
  need HDB_NGRAM_CPU HDB_RA_CPU
  for opt in --vocabulary --query-count --query-min --query-max; do
    run 30 "$HDB_NGRAM_CPU" --list "$opt" -3
    expect_rc 2
    expect_err "$opt: '-3' is not a whole number (0, 1, 2, ...)"
  done
  run 30 "$HDB_RA_CPU" --only select/serial --list --device -1
  expect_rc 2
  expect_err "--device: '-1' is not a whole number (0, 1, 2, ...)"
}

# A signed number is no platform index: a usage error, not "no platform matches" (exit 77).
platform_index() {
  need HDB_RA_OPENCL
  for p in -1 +1 -0; do
    run 30 "$HDB_RA_OPENCL" --only select/paper --sizes 32K --list --platform "$p"
    expect_rc 2
    expect_err "--platform: '$p' is not a platform index"
  done
}

# --list --tables on a folder of Parquet files lists the cases without converting them (the file here
# is no Parquet: converting it would fail, exit 2).
list_converts_nothing() {
  need HDB_SSB_CPU HDB_TPCH_CPU
  mkdir "$T/pq"
  : >"$T/pq/customer.parquet"
  run 30 "$HDB_SSB_CPU" --tables "$T/pq" --list
  expect_rc 0
  expect_out "q1.1/serial[data=parquet]"
  expect_no_err "converted"
  run 30 "$HDB_TPCH_CPU" --data tpch --tables "$T/pq" --list
  expect_rc 0
  expect_out "[data=parquet,key=32]"
}

"$1"
