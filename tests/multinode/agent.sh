#!/bin/sh
# Open MPI's rsh agent for the simulated cluster (cluster.sh): `agent.sh HOST COMMAND...` runs
# COMMAND (Open MPI's daemon, as ssh would run it) on the node whose address is HOST: in that
# node's network namespace, in a UTS namespace of its own with the node's host name. HDB_MN_NODES
# names the table "ADDRESS NAMESPACE HOSTNAME" (cluster.sh exec sets it). With HDB_MN_HIDE=PATH,
# PATH is an empty directory on every node but the first (a tmpfs in that node's mount namespace,
# which `ip netns exec` makes private): a directory that is missing on one node.
host=$1
shift
[ -n "${HDB_MN_NODES:-}" ] && [ -r "$HDB_MN_NODES" ] || { echo "agent.sh: HDB_MN_NODES is not set" >&2; exit 255; }
ns=
first=
while read -r addr n name; do
  [ -n "$first" ] || first=$addr
  if [ "$addr" = "$host" ] || [ "$name" = "$host" ]; then
    ns=$n
    hn=$name
    break
  fi
done <"$HDB_MN_NODES"
[ -n "$ns" ] || { echo "agent.sh: no node $host in $HDB_MN_NODES" >&2; exit 255; }
hide=
[ "$addr" != "$first" ] && hide=${HDB_MN_HIDE:-}
exec ip netns exec "$ns" unshare --uts sh -c '
  hostname "$0" || exit 255
  if [ -n "$1" ]; then mount -t tmpfs -o size=1m hdb-hidden "$1" || exit 255; fi
  shift
  eval "$*"' "$hn" "$hide" "$@"
