"""vllm-cache list, lookup and prune on a cache in a folder here, through the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from rbln_artifact_studio.core.sizes import format_bytes
from vllm_cache.cache_fixture import MEGA, MODEL, SEQS, build_cache, holding, serve, serving, tree

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def cache(tmp_path: Path) -> tuple[Path, str, dict[str, Path]]:
    root = tmp_path / "vllm"
    return root, MODEL, build_cache(root)


def _statuses(run_cli: Run, root: object) -> dict[str, dict[str, object]]:
    out = run_cli("vllm-cache", "list", root, "--json")
    assert out.returncode == 3, out.stderr  # an incomplete entry: as scan's invalid row
    return {e["name"]: e for e in json.loads(out.stdout)}


def test_list_names_each_entry_s_status_and_why(run_cli: Run, cache: tuple[Path, str, dict[str, Path]]) -> None:
    root, _, folders = cache
    with holding(folders["in-use"]) as holder:
        entries = _statuses(run_cli, root)
    assert {name: e["status"] for name, e in entries.items()} == {
        **{f.name: state for state, f in folders.items()},
        MEGA.split("/", 1)[1]: "ok",
    }
    assert any("missing" in r for r in entries[folders["incomplete"].name]["reasons"])  # type: ignore[attr-defined]
    stale = " ".join(entries[folders["stale"].name]["reasons"])  # type: ignore[arg-type]
    assert "0.10.2" in stale and "kvcache_metas" in stale
    held = entries[folders["in-use"].name]
    assert f"pid {holder.pid}" in held["reasons"][0] and "rbln_config.json open" in held["reasons"][0]  # type: ignore[index]
    ok = entries[folders["ok"].name]
    assert ok["fields"]["gpu_memory_utilization"] == 0.5 and ok["fields"]["batch_size"] == 1  # type: ignore[index]
    assert ok["size"] == sum(p.stat().st_size for p in folders["ok"].iterdir())


def test_lookup_hits_and_warns_on_each_status(run_cli: Run, cache: tuple[Path, str, dict[str, Path]]) -> None:
    root, model, folders = cache
    from vllm_cache.cache_fixture import SEQS

    with holding(folders["in-use"]):
        for state, seqs in SEQS.items():
            out = run_cli("vllm-cache", "lookup", root, "--json", "--", *serve(model, seqs))
            answer = json.loads(out.stdout)
            assert (answer["result"], answer["entry"]["name"]) == ("hit", folders[state].name)
            assert answer["key"] == folders[state].name
            if state == "ok":
                assert answer["warnings"] == [] and out.returncode == 0
            else:
                assert any(w.startswith(f"the entry is {state}") for w in answer["warnings"]), answer["warnings"]
                assert f"warning: the entry is {state}" in out.stderr


def test_a_near_miss_names_the_field_and_a_miss_says_what_compile_writes(
    run_cli: Run, cache: tuple[Path, str, dict[str, Path]], tmp_path: Path
) -> None:
    root, model, folders = cache
    out = run_cli("vllm-cache", "lookup", root, "--", *serve(model, 1, budget="0.6"))
    assert out.returncode == 1
    assert f"near: {folders['ok'].name}: only gpu_memory_utilization differs: 0.6 against the entry's 0.5" in out.stdout
    miss = run_cli("vllm-cache", "lookup", root, "--json", "--", *serve(model, 8, budget="0.45"))
    answer = json.loads(miss.stdout)
    assert answer["result"] == "near-miss" and miss.returncode == 1  # the same model, other max_num_seqs
    would = answer["would_compile"]
    compiled = run_cli("compile", "--model-id", model, "--output-dir", tmp_path / "c", "--npu", "RBLN-CA25",
                       "--batch_size", "8", "--max_seq_len", "8192", "--kvcache_partition_len", "4096",
                       "--memory-budget", "0.45")  # fmt: skip
    assert compiled.returncode == 0, compiled.stderr
    written = json.loads((tmp_path / "c" / "rbln_config.json").read_text())["kvcache_num_blocks"]
    assert would["kvcache_num_blocks"] == written
    assert would["num_min_blocks"] <= written <= would["num_full_blocks"] and would["dram"]
    other = run_cli("vllm-cache", "lookup", root, "--json", "--", "vllm", "serve", "Qwen/Qwen3-8B", "--max-model-len",
                    "8192", "--block-size", "4096")  # fmt: skip
    assert json.loads(other.stdout)["result"] == "miss" and other.returncode == 1


def test_prune_dry_run_changes_nothing(run_cli: Run, cache: tuple[Path, str, dict[str, Path]]) -> None:
    root, _, folders = cache
    before = tree(root)
    out = run_cli("vllm-cache", "prune", root, "--stale", "--incomplete", "--dry-run", "--json")
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert tree(root) == before
    would = {e["name"] for e in answer["entries"] if e["action"] == "would remove"}
    assert would == {folders["stale"].name, folders["incomplete"].name}
    assert answer["freed"] == sum(p.stat().st_size for s in ("stale", "incomplete") for p in folders[s].iterdir())


def test_prune_removes_exactly_the_stale_and_incomplete_and_never_one_in_use(
    run_cli: Run, cache: tuple[Path, str, dict[str, Path]]
) -> None:
    root, _, folders = cache
    # in use and stale too: the holder wins
    raw = json.loads((folders["in-use"] / "rbln_config.json").read_text())
    (folders["in-use"] / "rbln_config.json").write_text(json.dumps({**raw, "optimum_rbln_version": "0.10.0"}))
    with holding(folders["in-use"]):
        out = run_cli("vllm-cache", "prune", root, "--stale", "--incomplete")
        assert out.returncode == 0, out.stderr
        assert f"kept         compiled_models/{folders['in-use'].name}" in out.stdout and "in use: pid" in out.stdout
    left = sorted(p.name for p in (root / "compiled_models").iterdir())
    assert left == sorted([folders["ok"].name, folders["in-use"].name])  # and no staging folder left behind
    assert (root / MEGA / "rank0" / "mega_cache.bin").is_file()
    assert "freed" in out.stdout.splitlines()[-1]


def test_prune_never_follows_a_link_out_of_the_cache(run_cli: Run, cache: tuple[Path, str, dict[str, Path]],
                                                      tmp_path: Path) -> None:  # fmt: skip
    root, _, folders = cache
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.bin").write_bytes(b"x" * 10)
    (folders["incomplete"] / "weights").symlink_to(outside)
    (root / "compiled_models" / "linked_0123456789abcdef").symlink_to(outside)
    out = run_cli("vllm-cache", "prune", root, "--incomplete", "--stale")
    assert out.returncode == 0, out.stderr
    assert (outside / "keep.bin").read_bytes() == b"x" * 10
    assert not folders["incomplete"].exists()
    assert (root / "compiled_models" / "linked_0123456789abcdef").is_symlink()  # a link entry is kept, not followed
    assert "a link" in out.stdout


def test_prune_without_a_rule_is_refused(run_cli: Run, cache: tuple[Path, str, dict[str, Path]]) -> None:
    root, _, _ = cache
    before = tree(root)
    out = run_cli("vllm-cache", "prune", root)
    assert out.returncode == 1 and out.stderr.startswith("error: Say what to prune")
    assert tree(root) == before


def test_a_folder_that_holds_no_cache_is_one_clear_line(run_cli: Run, tmp_path: Path) -> None:
    out = run_cli("vllm-cache", "list", tmp_path)
    assert (
        out.returncode == 1
        and out.stderr
        == f"error: {tmp_path} holds no compiled_models/ or rbln/ folder, so no vLLM cache. Give the cache's root.\n"
    )


def test_what_vllm_rbln_never_names_is_no_entry_and_never_pruned(
    run_cli: Run, cache: tuple[Path, str, dict[str, Path]]
) -> None:
    root, _, folders = cache
    models = root / "compiled_models"
    (models / "README").write_text("ops notes\n")
    (models / "my-finetune").mkdir()
    (models / "my-finetune" / "notes.txt").write_text("mine")
    (models / "odd: näme_0123456789abcdef").mkdir()  # vllm-rbln's shape of name: an entry (with no rbln_config.json)
    names = set(_statuses(run_cli, root))
    assert "README" not in names and "my-finetune" not in names and "odd: näme_0123456789abcdef" in names
    out = run_cli("vllm-cache", "prune", root, "--stale", "--incomplete", "--older-than", "0s")
    assert out.returncode == 0, out.stdout + out.stderr
    assert (models / "README").read_text() == "ops notes\n" and (models / "my-finetune" / "notes.txt").is_file()
    assert not (models / "odd: näme_0123456789abcdef").exists() and not folders["stale"].exists()


def test_a_cut_short_rbln_config_is_still_a_hit_and_an_entry_of_unknown_settings_no_near_miss(
    run_cli: Run, cache: tuple[Path, str, dict[str, Path]]
) -> None:
    root, model, folders = cache
    (folders["incomplete"] / "rbln_config.json").write_text('{"batch_size": 2, "max_se')  # a write cut short
    out = run_cli("vllm-cache", "lookup", root, "--json", "--", *serve(model, SEQS["incomplete"]))
    answer = json.loads(out.stdout)
    assert answer["result"] == "hit" and out.returncode == 3  # vllm-rbln tests only that the file exists
    assert any("not valid JSON" in w for w in answer["warnings"])
    (folders["incomplete"] / "rbln_config.json").unlink()  # now vllm-rbln compiles into it again: a miss
    out = run_cli("vllm-cache", "lookup", root, "--json", "--", *serve(model, SEQS["incomplete"]))
    answer = json.loads(out.stdout)
    assert answer["result"] == "miss" and out.returncode == 1
    other = run_cli("vllm-cache", "lookup", root, "--json", "--", *serve(model, 9))
    near = {d["entry"] for d in json.loads(other.stdout)["differences"]}
    assert folders["incomplete"].name not in near and folders["ok"].name in near  # nothing known to differ on


def test_list_s_text_names_each_entry_s_model_and_settings(
    run_cli: Run, cache: tuple[Path, str, dict[str, Path]]
) -> None:
    root, model, folders = cache
    out = run_cli("vllm-cache", "list", root)
    lines = out.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if folders["ok"].name in line)
    assert " modified " in lines[at] and " used " in lines[at]
    assert lines[at + 1].split() == [f"{model}:", "max_num_seqs", "1,", "max_model_len", "8192,", "block_size",
                                     "4096,", "devices", "1,", "dtype", "torch.bfloat16,", "gpu_memory_utilization",
                                     "0.5"]  # fmt: skip


def test_reading_the_cache_never_makes_an_entry_look_used(
    run_cli: Run, cache: tuple[Path, str, dict[str, Path]]
) -> None:
    root, _, folders = cache
    ten_days_ago = time.time() - 10 * 86400
    for path in [folders["ok"], *folders["ok"].iterdir()]:
        os.utime(path, (ten_days_ago, ten_days_ago))
    for _ in range(2):  # a list, then the dry run a careful user makes first: neither is a use
        assert run_cli("vllm-cache", "list", root).returncode == 3
        dry = run_cli("vllm-cache", "prune", root, "--older-than", "7d", "--dry-run", "--json")
        assert [e["name"] for e in json.loads(dry.stdout)["entries"] if e["action"] == "would remove"] == [
            folders["ok"].name
        ]
    assert run_cli("vllm-cache", "prune", root, "--older-than", "7d").returncode == 0
    assert not folders["ok"].exists() and folders["stale"].exists()


def test_a_bundle_with_an_empty_rank_is_incomplete(run_cli: Run, cache: tuple[Path, str, dict[str, Path]]) -> None:
    root, _, _ = cache
    (root / MEGA / "rank1").mkdir()
    (root / MEGA / "rank1" / "mega_cache.bin").write_bytes(b"")  # rank 1 died before writing its bundle
    bundle = _statuses(run_cli, root)[MEGA.split("/", 1)[1]]
    assert bundle["status"] == "incomplete" and bundle["reasons"] == [
        "rank1: mega_cache.bin is empty, its write never finished"
    ]


def test_a_miss_in_text_gives_the_dram_of_each_chiplet_at_that_budget(
    run_cli: Run, cache: tuple[Path, str, dict[str, Path]]
) -> None:
    root, model, _ = cache
    out = run_cli("vllm-cache", "lookup", root, "--", *serve(model, 8, budget="0.45"))
    answer = json.loads(run_cli("vllm-cache", "lookup", root, "--json", "--", *serve(model, 8, budget="0.45")).stdout)
    lines = out.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("A compile on RBLN-CA25 at gpu_memory_utilization"))
    dram = answer["would_compile"]["dram"]
    assert len(dram) >= 1 and lines[at + 1 : at + 1 + len(dram)] == [
        f"  node {u['node']} chiplet {u['chiplet']}: weights {format_bytes(u['weights'])} | workspace "
        f"{format_bytes(u['workspace'])} | KV {format_bytes(u['kv'])} | free {format_bytes(u['free_in_budget'])} of "
        f"its {format_bytes(u['budget'])} budget"
        for u in dram
    ]
    assert lines[at + 1 + len(dram)].startswith("about ") and "on disk" in lines[at + 1 + len(dram)]


def test_an_entry_a_running_vllm_serve_hits_is_in_use_and_never_pruned(
    run_cli: Run, cache: tuple[Path, str, dict[str, Path]]
) -> None:
    root, model, folders = cache
    naming = [sys.executable, "-c", "import sys; sys.stdin.read()", "vllm-cache", "lookup", "--", *serve(model, 1)]
    with subprocess.Popen(naming, stdin=subprocess.PIPE) as mention:  # a command that only names one: no server
        assert _statuses(run_cli, root)[folders["ok"].name]["status"] == "ok"
        mention.kill()
    with serving(serve(model, SEQS["ok"]), root.parent) as server:  # it loaded the entry and closed its files
        entry = _statuses(run_cli, root)[folders["ok"].name]
        reasons: list[str] = entry["reasons"]  # type: ignore[assignment]
        assert entry["status"] == "in-use" and reasons[0].startswith(f"pid {server.pid} (vllm) serves it")
        out = run_cli("vllm-cache", "prune", root, "--older-than", "0s")
        assert out.returncode == 0, out.stderr
        assert folders["ok"].is_dir() and not folders["stale"].exists()
