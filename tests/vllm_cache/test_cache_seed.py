"""vllm-cache seed: the entry a serve command will hit, written by the studio with the block count chosen."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from vllm_cache.cache_fixture import MODEL, serve, tree

Run = Callable[..., subprocess.CompletedProcess[str]]


def test_seed_compiles_the_entry_a_command_hits_with_the_count_chosen(run_cli: Run, tmp_path: Path) -> None:
    root = tmp_path / "vllm"
    root.mkdir()
    seeded = run_cli("vllm-cache", "seed", root, "--kvcache-num-blocks", "3", "--json", "--", *serve(MODEL, 2))
    assert seeded.returncode == 0, seeded.stderr
    answer = json.loads(seeded.stdout)
    assert (answer["kvcache_num_blocks"], answer["lookup"]) == (3, "hit")
    looked = json.loads(run_cli("vllm-cache", "lookup", root, "--json", "--", *serve(MODEL, 2)).stdout)
    assert looked["result"] == "hit" and answer["entry"].endswith(looked["key"])
    written = json.loads((root / "compiled_models" / looked["key"] / "rbln_config.json").read_text())
    assert written["kvcache_num_blocks"] == 3 and written["batch_size"] == 2


def test_seed_from_an_artifact_copies_it_resized_and_refuses_one_of_other_settings(
    run_cli: Run, tmp_path: Path
) -> None:
    root = tmp_path / "vllm"
    root.mkdir()
    first = json.loads(run_cli("vllm-cache", "seed", root, "--json", "--", *serve(MODEL, 2)).stdout)
    source = Path(first["entry"])
    other = run_cli("vllm-cache", "seed", root, "--from", source, "--json", "--", *serve(MODEL, 2, budget="0.6"))
    assert other.returncode == 0, other.stderr
    copy = json.loads(other.stdout)
    assert copy["lookup"] == "hit" and copy["entry"] != first["entry"]
    before = tree(root)
    refused = run_cli("vllm-cache", "seed", root, "--from", source, "--", *serve(MODEL, 4))
    assert refused.returncode == 1 and "max_num_seqs 2 (the command serves 4)" in refused.stderr
    assert tree(root) == before


def test_seed_refuses_an_entry_already_there_and_a_count_below_one(run_cli: Run, tmp_path: Path) -> None:
    root = tmp_path / "vllm"
    root.mkdir()
    assert run_cli("vllm-cache", "seed", root, "--", *serve(MODEL, 2)).returncode == 0
    before = tree(root)
    again = run_cli("vllm-cache", "seed", root, "--kvcache-num-blocks", "3", "--", *serve(MODEL, 2))
    assert again.returncode == 1 and again.stderr.startswith("error: ") and "is there already" in again.stderr
    assert "Prune it first" in again.stderr and len(again.stderr.splitlines()) == 1
    zero = run_cli("vllm-cache", "seed", root, "--kvcache-num-blocks", "0", "--", *serve(MODEL, 5))
    assert zero.returncode == 1 and zero.stderr == "error: --kvcache-num-blocks takes a count of 1 or more, got 0.\n"
    bare = run_cli("vllm-cache", "seed", root)
    assert bare.returncode == 1 and "vllm-cache seed [ROOT] -- vllm serve" in bare.stderr
    assert tree(root) == before
