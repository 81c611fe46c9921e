"""vllm-cache list, lookup and prune of a cache on an SSH server (a real sshd), as of one here."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from vllm_cache.cache_fixture import MEGA, MODEL, SEQS, build_cache, holding, serve, serving, tree

from remote.conftest import Run, url


def test_list_lookup_and_prune_over_ssh(remote_cli: Run, tmp_path: Path) -> None:
    root = tmp_path / "vllm"
    folders = build_cache(root)
    with holding(folders["in-use"]) as holder:  # a process on the server (this machine is the server)
        listed = remote_cli("vllm-cache", "list", url(root), "--json")
        assert listed.returncode == 3, listed.stderr
        entries = {e["name"]: e for e in json.loads(listed.stdout)}
        assert {folders[s].name: entries[folders[s].name]["status"] for s in SEQS} == {
            f.name: s for s, f in folders.items()
        }
        assert entries[MEGA.split("/", 1)[1]]["status"] == "ok"
        assert f"pid {holder.pid}" in entries[folders["in-use"].name]["reasons"][0]
        assert entries[folders["incomplete"].name]["path"] == url(folders["incomplete"])

        for state, seqs in SEQS.items():
            out = remote_cli("vllm-cache", "lookup", url(root), "--json", "--", *serve(MODEL, seqs))
            answer = json.loads(out.stdout)
            assert (answer["result"], answer["entry"]["name"]) == ("hit", folders[state].name), out.stderr
            assert (state == "ok") == (answer["warnings"] == [])

        before = tree(root)
        dry = remote_cli("vllm-cache", "prune", url(root), "--stale", "--incomplete", "--dry-run")
        assert dry.returncode == 0 and tree(root) == before

        pruned = remote_cli("vllm-cache", "prune", url(root), "--stale", "--incomplete", "--json")
        assert pruned.returncode == 0, pruned.stderr
        rows = {r["name"]: r for r in json.loads(pruned.stdout)["entries"]}
        assert rows[folders["in-use"].name]["action"] == "kept"
    left = sorted(p.name for p in (root / "compiled_models").iterdir())
    assert left == sorted([folders["ok"].name, folders["in-use"].name])
    assert {rows[folders[s].name]["action"] for s in ("stale", "incomplete")} == {"removed"}


def test_an_entry_in_use_on_the_server_is_never_removed(remote_cli: Run, tmp_path: Path) -> None:
    root = tmp_path / "vllm"
    folders = build_cache(root)
    with holding(folders["stale"]):  # stale, and in use: the holder wins
        out = remote_cli("vllm-cache", "prune", url(root), "--stale", "--older-than", "0s")
        assert out.returncode == 0, out.stderr
        assert folders["stale"].is_dir()
        assert f"kept         compiled_models/{folders['stale'].name}" in out.stdout


def test_reading_a_server_s_cache_never_makes_an_entry_look_used(remote_cli: Run, tmp_path: Path) -> None:
    root = tmp_path / "vllm"
    folders = build_cache(root)
    ten_days_ago = time.time() - 10 * 86400
    for path in [folders["ok"], *folders["ok"].iterdir()]:
        os.utime(path, (ten_days_ago, ten_days_ago))
    for _ in range(2):  # the list and the dry run read every file of it on the server: neither is a use
        assert remote_cli("vllm-cache", "list", url(root)).returncode == 3
        dry = remote_cli("vllm-cache", "prune", url(root), "--older-than", "7d", "--dry-run", "--json")
        chosen = [e["name"] for e in json.loads(dry.stdout)["entries"] if e["action"] == "would remove"]
        assert chosen == [folders["ok"].name], dry.stderr


def test_an_entry_a_running_vllm_serve_on_the_server_hits_is_in_use(remote_cli: Run, tmp_path: Path) -> None:
    root = tmp_path / "vllm"
    folders = build_cache(root)
    with serving(serve(MODEL, SEQS["ok"]), tmp_path) as server:  # on the server (this machine is the server)
        listed = remote_cli("vllm-cache", "list", url(root), "--json")
        entry = {e["name"]: e for e in json.loads(listed.stdout)}[folders["ok"].name]
        assert entry["status"] == "in-use" and f"pid {server.pid}" in entry["reasons"][0], listed.stderr
        out = remote_cli("vllm-cache", "prune", url(root), "--older-than", "0s")
        assert out.returncode == 0 and folders["ok"].is_dir() and not folders["stale"].exists()
