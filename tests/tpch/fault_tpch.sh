#!/bin/bash
# Scripted fault reproductions for the TPC-H loader and generator (issue 15, items 7 and 8).
#   fault_tpch.sh CASE HDB_TPCH_CPU TPCH_TBL_TOOL
# Each case works in a temporary directory of its own, bounds every run with `timeout`, and checks
# the exit code, the message and that nothing already written is lost.
set -u
case_name=$1 exe=$2 tool=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/hdb-fault-tpch.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL ($case_name): $*"; [ -f "$work/err" ] && { echo "--- stderr:"; head -c 2000 "$work/err"; echo; }; exit 1; }
# run SECONDS ARGS...: runs the benchmark; exit code in $rc, stdout in $work/out, stderr in $work/err.
run() {
  local t=$1
  shift
  timeout "$t" "$exe" "$@" >"$work/out" 2>"$work/err"
  rc=$?
  [ $rc -ge 124 ] && fail "exit $rc (timeout or signal) running $*"
  return 0
}
expect_usage() {  # expect_usage PATTERN: exit 2 with PATTERN on stderr, one short line
  [ $rc -eq 2 ] || fail "exit $rc, expected 2"
  grep -q -- "$1" "$work/err" || fail "stderr lacks '$1'"
  local bytes
  bytes=$(wc -c <"$work/err")
  [ "$bytes" -lt 1000 ] || fail "a message of $bytes bytes (fields must be cut at 80 characters)"
}
tbl() {  # a small valid .tbl set in $work/tbl
  mkdir -p "$work/tbl" && timeout 60 "$tool" write 0.002 "$work/tbl" || fail "cannot write the .tbl set"
}
tiny=(--data tpch --kernels A --only 'A/columnar-serial' --passes 1 --max-passes 1 --max-time 0.1)

case "$case_name" in
  empty_customer)
    tbl
    : >"$work/tbl/customer.tbl"
    run 60 "${tiny[@]}" --tbl-dir "$work/tbl"
    expect_usage "customer.tbl: no rows"
    ;;
  empty_lineitem)
    tbl
    printf '\n\n\r\n' >"$work/tbl/lineitem.tbl"  # only blank lines: zero rows after parsing
    run 60 "${tiny[@]}" --tbl-dir "$work/tbl"
    expect_usage "lineitem.tbl: no rows"
    ;;
  bom)
    # A UTF-8 byte order mark is skipped: the same answer as without it.
    tbl
    run 60 "${tiny[@]}" --tbl-dir "$work/tbl"
    [ $rc -eq 0 ] || fail "exit $rc without a BOM"
    want=$(grep -o 'checksum [0-9a-f]*' "$work/out" | head -1)
    { printf '\xEF\xBB\xBF'; cat "$work/tbl/customer.tbl"; } >"$work/c" && mv "$work/c" "$work/tbl/customer.tbl"
    { printf '\xEF\xBB\xBF'; cat "$work/tbl/lineitem.tbl"; } >"$work/l" && mv "$work/l" "$work/tbl/lineitem.tbl"
    run 60 "${tiny[@]}" --tbl-dir "$work/tbl"
    [ $rc -eq 0 ] || fail "exit $rc with a UTF-8 BOM"
    got=$(grep -o 'checksum [0-9a-f]*' "$work/out" | head -1)
    [ -n "$want" ] && [ "$want" = "$got" ] || fail "answer '$got' with a BOM, '$want' without"
    { printf '\xFF\xFE'; cat "$work/tbl/orders.tbl"; } >"$work/o" && mv "$work/o" "$work/tbl/orders.tbl"
    run 60 "${tiny[@]}" --tbl-dir "$work/tbl"
    expect_usage "orders.tbl: starts with a UTF-16 byte order mark"
    ;;
  three_decimals)
    tbl
    sed -i '3s/^\(\([^|]*|\)\{5\}\)[0-9]*\.[0-9]*|/\11700.505|/' "$work/tbl/lineitem.tbl"
    run 60 "${tiny[@]}" --tbl-dir "$work/tbl"
    expect_usage "lineitem.tbl:3: column 6 (l_extendedprice) '1700.505': has 3 decimal places"
    ;;
  key_over_32_bits)
    # A key of 2^32 loads as a 64-bit column: the tables run at key=64, key=32 is skipped saying why.
    tbl
    sed -i '2s/^[0-9]*|/4294967296|/' "$work/tbl/orders.tbl"
    run 60 "${tiny[@]}" --tbl-dir "$work/tbl" --key-bits 32,64 --json "$work/k.json"
    [ $rc -eq 0 ] || fail "exit $rc with an order key of 2^32"
    grep -q 'skipped: keys reach 2^32 (the largest join key is 4294967296): these tables run at key=64 only' "$work/out" ||
      fail "key=32 not skipped with the reason"
    grep -q '"key": *64' "$work/k.json" || fail "no key=64 case in the JSON"
    grep -q '"verified": *true' "$work/k.json" || fail "the key=64 case did not verify"
    ;;
  key_over_64_bits)
    tbl
    sed -i '2s/^[0-9]*|/18446744073709551616|/' "$work/tbl/orders.tbl"
    run 60 "${tiny[@]}" --tbl-dir "$work/tbl" --key-bits 64
    expect_usage "orders.tbl:2: column 1 (o_orderkey) '18446744073709551616': does not fit 64 bits"
    ;;
  duplicate_key)
    # Issue 50, item 3: a customer row repeated (identical) and an order key on two different rows are
    # refused at load, naming the file, the key and both lines; no case runs.
    tbl
    rows=$(wc -l <"$work/tbl/customer.tbl")
    sed -n 2p "$work/tbl/customer.tbl" >>"$work/tbl/customer.tbl"
    run 60 "${tiny[@]}" --tbl-dir "$work/tbl" --json "$work/d.json"
    expect_usage "customer.tbl: c_custkey 2 is on line 2 ('2|Customer#000000002|"
    grep -q "and on line $((rows + 1)) ('2|Customer#000000002|.*c_custkey is the key of customer and must be unique" "$work/err" ||
      fail "the message does not name the second line"
    grep -q '"status": *"ok"' "$work/d.json" 2>/dev/null && fail "a case ran on the repeated key"
    sed -i '$d' "$work/tbl/customer.tbl"
    sed -i '3s/^[0-9]*|/1|/' "$work/tbl/orders.tbl"
    run 60 "${tiny[@]}" --tbl-dir "$work/tbl"
    expect_usage "orders.tbl: o_orderkey 1 is on line 1 ('1|"
    grep -q "and on line 3 ('1|.*o_orderkey is the key of orders and must be unique" "$work/err" ||
      fail "the message does not name the second line"
    ;;
  huge_field)
    # A 16 MiB field: the message quotes 80 bytes of it, then "...".
    tbl
    { head -c $((16 << 20)) /dev/zero | tr '\0' '7'; printf '|'; head -1 "$work/tbl/customer.tbl" | cut -d'|' -f2-; } >"$work/c"
    cat "$work/tbl/customer.tbl" >>"$work/c" && mv "$work/c" "$work/tbl/customer.tbl"
    run 60 "${tiny[@]}" --tbl-dir "$work/tbl"
    expect_usage "customer.tbl:1: column 1 (c_custkey) '7777777777.*\.\.\. (16777216 bytes)': does not fit 64 bits"
    ;;
  bad_output)
    # A bad --output is found before any work, and the previous results file is left as it was.
    echo '{"previous": true}' >"$work/old.json"
    cp "$work/old.json" "$work/keep.json"
    for bad in "$work/no-such-dir/out.tbl" "$work"; do
      run 60 --data tpch --sf 0.001 --kernels A --json "$work/old.json" --output "$bad"
      expect_usage "--output"
      grep -q '^case' "$work/out" && fail "cases ran before --output $bad was refused"
      cmp -s "$work/old.json" "$work/keep.json" || fail "the previous --json file was changed"
    done
    mkdir -p "$work/ro" && chmod 500 "$work/ro"
    if [ "$(id -u)" != 0 ]; then  # root writes anywhere: only checked as another user
      run 60 --data tpch --sf 0.001 --kernels A,B --output "$work/ro/out.tbl"
      expect_usage "--output: cannot create '$work/ro/out.A.tbl'"
    fi
    ;;
  generate_oom)
    # Out of memory while generating: the TPC-H cases are skipped with that reason, never an abort.
    # Address-space limits from high to low until the generator (sf 4: about 550 MiB of columns)
    # no longer fits; before that the harness's own buffers may not fit (exit 1 before any case).
    seen=
    for mb in 1100 1000 900 850 800 750 700 650 600 550 500 450; do
      (ulimit -v $((mb * 1024)) && exec timeout 120 "$exe" --data tpch --sf 4 --kernels A --only 'A/ra-serial' \
        --threads 1 --passes 1 --max-passes 1 --max-time 0.1 --json "$work/oom.json") >"$work/out" 2>"$work/err"
      rc=$?
      if grep -q AddressSanitizer "$work/err"; then
        echo "note: a sanitizer build cannot run under an address-space limit: not checked"
        break
      fi
      [ $rc -ge 124 ] && fail "exit $rc (timeout or signal) under a limit of $mb MB"
      if grep -q 'std::bad_alloc' "$work/err"; then
        grep -q '^case' "$work/out" && fail "std::bad_alloc escaped after cases had started under $mb MB"
        echo "note: under $mb MB the harness's copy-ceiling buffers do not fit (exit $rc before any case)"
        break
      fi
      [ $rc -eq 0 ] || fail "exit $rc under a limit of $mb MB"
      if grep -q 'skipped: out of host memory generating TPC-H sf=4' "$work/out"; then
        grep -q 'out of host memory generating TPC-H sf=4' "$work/oom.json" || fail "the JSON lacks the reason"
        seen=$mb
        break
      fi
    done
    [ -n "$seen" ] || echo "note: no limit between the harness's needs and the generator's was found"
    # A scale factor that cannot fit the memory is skipped before anything is generated, naming what
    # a case holds; at key=32 first because its order keys pass 2^32 (known before generating too).
    run 60 --data tpch --sf 1000 --kernels A --only 'A/ra-serial' --key-bits 32,64 --passes 1 --json "$work/big.json"
    [ $rc -eq 0 ] || fail "exit $rc at sf 1000"
    grep -q 'key=32.*skipped: keys reach 2^32 (the largest join key is 6000000000)' "$work/out" || fail "sf 1000 not skipped at key=32"
    grep -q 'key=64.*skipped: needs [0-9]* MiB of host memory (intermediate relations .*inputs [0-9]* MiB' "$work/out" ||
      fail "sf 1000 not skipped at key=64"
    ;;
  tbl_memory)
    # The loader streams: its peak memory is about the kept columns, not the files' size.
    mkdir -p "$work/tbl" && timeout 120 "$tool" write 0.1 "$work/tbl" || fail "cannot write the .tbl set"
    timeout 120 "$tool" check-memory "$work/tbl" >"$work/out" 2>"$work/err"
    rc=$?
    cat "$work/out"
    [ $rc -eq 0 ] || fail "exit $rc: $(cat "$work/out")"
    ;;
  *)
    fail "unknown case"
    ;;
esac
echo "ok: $case_name"
