#!/usr/bin/env bash
# A simulated two-node cluster on one Linux machine, for Open MPI runs across nodes (issue 20).
#
#   tests/multinode/cluster.sh up DIR     two network namespaces joined by a veth pair, private
#                                         addresses 10.77.0.1 (node a) and 10.77.0.2 (node b); writes
#                                         DIR/hosts (an Open MPI hostfile, 2 slots per node),
#                                         DIR/mpi-args (the launcher options) and DIR/nodes
#   tests/multinode/cluster.sh exec DIR CMD...
#                                         runs CMD on node a (its namespace, host name hdb-node-a):
#                                         mpirun there starts node b's daemon through the rsh agent
#   tests/multinode/cluster.sh down DIR   stops every process in the namespaces, deletes them
#                                         (the veth pair goes with them)
#
# The rsh agent (agent.sh beside this file) runs Open MPI's daemon on node b with `ip netns exec`
# in a UTS namespace of its own (host name hdb-node-b). Open MPI's TCP traffic (out-of-band and
# MPI messages) is restricted to 10.77.0.0/24, the veth pair: what crosses between the nodes is
# real TCP over a (virtual) network link. Both nodes see the same file system; HDB_MN_HIDE=PATH
# makes PATH an empty directory on node b only (a tmpfs mounted in node b's own mount namespace),
# which is how a directory that is missing on one node is simulated.
#
# Needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN) and iproute2; exits 77 saying why when a namespace
# cannot be made. The namespace names carry the owner's pid (HDB_MN_OWNER, else the caller's) and
# a random suffix, so clusters never collide, and one whose owner died is removed by the next `up`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
SUBNET=10.77.0.0/24

usage() {
  echo "usage: $0 up DIR | exec DIR CMD... | down DIR" >&2
  exit 2
}

cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || usage
shift 2

case "$cmd" in
up)
  command -v ip >/dev/null || { echo "SKIP: no 'ip' command (Debian: iproute2)"; exit 77; }
  command -v unshare >/dev/null || { echo "SKIP: no 'unshare' command (Debian: util-linux)"; exit 77; }
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  # Names: hdbmn-<owner pid>-<random>-a|b. A cluster whose owner is gone (a test killed by a time
  # limit before its trap ran) is removed here.
  owner=${HDB_MN_OWNER:-$PPID}
  for ns in $(ip netns list 2>/dev/null | awk '$1 ~ /^hdbmn-[0-9]+-/ {print $1}'); do
    pid=${ns#hdbmn-}
    pid=${pid%%-*}
    if ! kill -0 "$pid" 2>/dev/null; then
      pids=$(ip netns pids "$ns" 2>/dev/null || true)
      [ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
      ip netns del "$ns" 2>/dev/null || true
    fi
  done
  id=$owner-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
  a=hdbmn-$id-a
  b=hdbmn-$id-b
  if ! err=$(ip netns add "$a" 2>&1); then
    echo "SKIP: cannot create a network namespace (ip netns add: ${err:-failed}); needs root or CAP_SYS_ADMIN"
    exit 77
  fi
  printf '%s\n' "$a" >"$dir/namespaces"
  ip netns add "$b"
  printf '%s\n' "$b" >>"$dir/namespaces"
  # The veth pair is made inside node a and its peer moved to node b: no name in the host's own
  # namespace, so concurrent clusters cannot collide.
  ip -n "$a" link add hdb-veth type veth peer name hdb-veth netns "$b"
  ip -n "$a" addr add 10.77.0.1/24 dev hdb-veth
  ip -n "$b" addr add 10.77.0.2/24 dev hdb-veth
  for ns in "$a" "$b"; do
    ip -n "$ns" link set lo up
    ip -n "$ns" link set hdb-veth up
  done
  printf '10.77.0.1 %s hdb-node-a\n10.77.0.2 %s hdb-node-b\n' "$a" "$b" >"$dir/nodes"
  printf '10.77.0.1 slots=2\n10.77.0.2 slots=2\n' >"$dir/hosts"
  printf '%s\n' "--mca plm_rsh_agent $here/agent.sh --mca oob_tcp_if_include $SUBNET --mca btl_tcp_if_include $SUBNET --mca btl self,vader,tcp" >"$dir/mpi-args"
  echo "cluster up: node a 10.77.0.1 ($a), node b 10.77.0.2 ($b); hostfile $dir/hosts"
  ;;
exec)
  dir=$(cd "$dir" && pwd)
  [ -s "$dir/nodes" ] || { echo "$0: $dir holds no cluster (run '$0 up $dir' first)" >&2; exit 2; }
  [ $# -gt 0 ] || usage
  read -r _ a name <"$dir/nodes"
  export HDB_MN_NODES="$dir/nodes"
  exec ip netns exec "$a" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$name" "$@"
  ;;
down)
  [ -f "$dir/namespaces" ] || exit 0
  while read -r ns; do
    [ -n "$ns" ] || continue
    # Whatever still runs in the namespace (a rank, an orted) first: a namespace in use by a
    # process would outlive its name.
    for sig in TERM KILL; do
      pids=$(ip netns pids "$ns" 2>/dev/null || true)
      [ -n "$pids" ] || break
      kill -s "$sig" $pids 2>/dev/null || true
      sleep 1
    done
    ip netns del "$ns" 2>/dev/null || true
  done <"$dir/namespaces"
  rm -f "$dir/namespaces" "$dir/nodes"
  ;;
*) usage ;;
esac
