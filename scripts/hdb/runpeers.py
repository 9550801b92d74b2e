"""Launching a peer as an entry of a run (docs/peers.md): the PeerJob the driver hands it, whether it
can run here (else the entry is skipped with the reason) and its command line, which the driver
then runs exactly as an executable (runexec)."""
from __future__ import annotations

from typing import Any

from . import peers

Entry = dict[str, Any]


def peer_job(e: Entry, repo: str, build_dir: str, json_path: str, csv_path: str) -> peers.PeerJob:
    return peers.PeerJob(peer=e["peer"], benchmark=e["benchmark"], python=peers.interpreter(),
                         repo=repo, build_dir=build_dir, json=json_path, csv=csv_path, args=list(e["args"]),
                         timeout_s=e["timeout_s"])


def peer_unavailable(e: Entry, repo: str) -> str:
    """Why a peer cannot run here ('' when it can): its module, the project venv, its package."""
    mod = peers.module(e["peer"])
    if mod is None:
        return f"peer {e['peer']} is not in this checkout (scripts/hdb/peers)"
    ok, why = mod.available(peers.interpreter())
    return "" if ok else why


def peer_command(job: peers.PeerJob) -> list[str]:
    """The argv of a peer's run (its module's command(job)); a peer runs on this host, never under mpirun."""
    mod = peers.module(job.peer)
    if mod is None:
        raise RuntimeError(f"peer {job.peer} is not in this checkout (scripts/hdb/peers)")
    return list(mod.command(job))
