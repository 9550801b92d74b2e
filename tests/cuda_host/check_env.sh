#!/usr/bin/env bash
# Host execution's settings from the environment (issue 50, item 6): each bad value is a usage error
# (exit 2) naming the variable, never ignored or taken in part (strtod read "1.5x" as 1 byte and
# "999999T" as 1.1e18 bytes, and ignored "garbage", "0", "-5G", "1e30", "abc", "bogus"); good values run.
# Usage: check_env.sh HDB-RA-CUDA-HOST
exe=$1
args=(--only select/cub --sizes 32K --passes 1 --max-passes 1 --warmup 0 --max-time 0.01 --quiet)
status=0
check() {  # check "VAR=VALUE ..." WANT_RC [MESSAGE]
  local err rc settings
  read -ra settings <<<"$1"
  [ ${#settings[@]} = 0 ] && settings=("$1")
  err=$(env "${settings[@]}" timeout 60 "$exe" "${args[@]}" 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" != "$2" ]; then
    echo "FAIL: $1: exit code $rc, expected $2: $err"
    status=1
  elif [ -n "${3:-}" ] && ! grep -qF -- "$3" <<<"$err"; then
    echo "FAIL: $1: stderr does not say '$3': $err"
    status=1
  else
    echo "ok: $1 -> $rc"
  fi
}
for v in garbage 0 -5G 1e30 999999T 1.5x ""; do
  check "HDB_CUDA_HOST_MEMORY=$v" 2 "error: HDB_CUDA_HOST_MEMORY: "
done
check "HDB_CUDA_HOST_MEMORY=1.5x" 2 "HDB_CUDA_HOST_MEMORY: '1.5x' is not a valid size"
check "HDB_CUDA_HOST_FAULT=0" 2 "error: HDB_CUDA_HOST_FAULT: 0 is outside 1..18446744073709551615"
for v in abc -1 2x; do
  check "HDB_CUDA_HOST_FAULT=$v" 2 "error: HDB_CUDA_HOST_FAULT: '$v' is not an integer in 1..18446744073709551615"
done
check "HDB_CUDA_HOST_ENGINE=bogus" 2 "error: HDB_CUDA_HOST_ENGINE: 'bogus' (allowed: fibers, threads)"
check "HDB_CUDA_HOST_BLOCKS=random" 2 "error: HDB_CUDA_HOST_BLOCKS: 'random' (allowed: in-order, reverse, shuffled)"
check "HDB_CUDA_HOST_TRACE=yes" 2 "error: HDB_CUDA_HOST_TRACE: 'yes' (allowed: 0, 1)"
check "HDB_CUDA_SYNC_CHECK=true" 2 "error: HDB_CUDA_SYNC_CHECK: 'true' (allowed: 0, 1)"
# Good values, together in one run (a run takes seconds).
check "HDB_CUDA_HOST_MEMORY=2^26 HDB_CUDA_HOST_ENGINE=fibers HDB_CUDA_HOST_TRACE=0 HDB_CUDA_SYNC_CHECK=1 HDB_CUDA_HOST_FAULT=99999 HDB_CUDA_HOST_BLOCKS=shuffled" 0
exit $status
