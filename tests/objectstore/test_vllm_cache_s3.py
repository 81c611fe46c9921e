"""vllm-cache list, lookup and prune of a cache kept in a bucket (a real SeaweedFS store)."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from vllm_cache.cache_fixture import MEGA, MODEL, SEQS, build_cache, serve

from objectstore.conftest import BucketFixture

Run = Callable[..., subprocess.CompletedProcess[str]]


def test_list_lookup_and_prune_in_a_bucket(bucket: BucketFixture, run_cli: Run, tmp_path: Path) -> None:
    folders = build_cache(tmp_path / "vllm")
    bucket.upload(tmp_path / "vllm", "nodes/n1/vllm")
    root = bucket.url("nodes/n1/vllm")
    listed = run_cli("vllm-cache", "list", root, "--json")
    assert listed.returncode == 3, listed.stderr
    entries = {e["name"]: e for e in json.loads(listed.stdout)}
    expected = {f.name: ("ok" if state == "in-use" else state) for state, f in folders.items()}  # nothing is in use
    assert {name: entries[name]["status"] for name in expected} == expected
    assert entries[MEGA.split("/", 1)[1]]["status"] == "ok"
    assert any("missing" in r for r in entries[folders["incomplete"].name]["reasons"])
    assert entries[folders["ok"].name]["path"] == f"{root}/compiled_models/{folders['ok'].name}"

    for state, seqs in SEQS.items():
        out = run_cli("vllm-cache", "lookup", root, "--json", "--", *serve(MODEL, seqs))
        answer = json.loads(out.stdout)
        assert (answer["result"], answer["entry"]["name"]) == ("hit", folders[state].name), out.stderr
        assert (state in ("ok", "in-use")) == (answer["warnings"] == [])

    before = bucket.objects()
    dry = run_cli("vllm-cache", "prune", root, "--stale", "--incomplete", "--dry-run")
    assert dry.returncode == 0 and bucket.objects() == before

    pruned = run_cli("vllm-cache", "prune", root, "--stale", "--incomplete")
    assert pruned.returncode == 0, pruned.stderr
    gone = {f"nodes/n1/vllm/compiled_models/{folders[s].name}/" for s in ("stale", "incomplete")}
    assert {k for k in before if any(k.startswith(g) for g in gone)}  # they were there
    assert {k for k in before if not any(k.startswith(g) for g in gone)} == set(bucket.objects())


def test_a_bucket_s_entries_are_dated_and_pruned_by_age(bucket: BucketFixture, run_cli: Run, tmp_path: Path) -> None:
    build_cache(tmp_path / "vllm")
    (tmp_path / "vllm" / "compiled_models" / "notes").mkdir()
    (tmp_path / "vllm" / "compiled_models" / "notes" / "mine.txt").write_text("an operator's own file")
    bucket.upload(tmp_path / "vllm", "nodes/n2/vllm")
    root = bucket.url("nodes/n2/vllm")
    entries = json.loads(run_cli("vllm-cache", "list", root, "--json").stdout)
    assert "notes" not in {e["name"] for e in entries}
    assert all(abs(e["modified"] - time.time()) < 3600 for e in entries), entries  # the objects' LastModified
    kept = run_cli("vllm-cache", "prune", root, "--older-than", "1d")
    assert kept.returncode == 0 and "would" not in kept.stdout and "removed" not in kept.stdout
    pruned = run_cli("vllm-cache", "prune", root, "--older-than", "0s")
    assert pruned.returncode == 0, pruned.stderr
    assert set(bucket.objects()) == {"nodes/n2/vllm/compiled_models/notes/mine.txt"}  # every entry gone, the rest kept
