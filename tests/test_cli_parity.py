"""optimum-rbln-cli 0.12.0's kv-cache flag combinations give the same answers here (its text, its exit code)."""

from __future__ import annotations

import json
from pathlib import Path

EXCLUSIVE = "--set-kvcache-num-blocks and --set-memory-budget are mutually exclusive."


def _count(artifact: Path) -> int:
    return json.loads((artifact / "rbln_config.json").read_text())["kvcache_num_blocks"]


def test_both_set_flags_are_mutually_exclusive(run_cli, cr13_artifact: Path) -> None:
    before = (cr13_artifact / "rbln_config.json").read_bytes()
    for argv in (
        ("--set-kvcache-num-blocks", "12", "--set-memory-budget", "0.2", "--model-id", cr13_artifact),
        ("--model-id", cr13_artifact, "--set-memory-budget=0.2", "--set-kvcache-num-blocks=12"),
    ):
        out = run_cli(*argv)
        assert (out.returncode, out.stderr.strip(), out.stdout) == (2, EXCLUSIVE, "")
    assert (cr13_artifact / "rbln_config.json").read_bytes() == before


def test_get_accepts_and_ignores_output_dir(run_cli, cr13_artifact: Path, tmp_path: Path) -> None:
    for flag in ("--output-dir", "-o", "--output_dir"):
        out = run_cli("--get-kvcache-num-blocks", "--model-id", cr13_artifact, flag, tmp_path / "x")
        assert (out.returncode, out.stdout) == (0, "21\n"), out.stderr
    out = run_cli("get-kvcache-num-blocks", cr13_artifact, "--output-dir", tmp_path / "x")
    assert (out.returncode, out.stdout) == (0, "21\n")
    assert not (tmp_path / "x").exists()


def test_get_wins_over_a_set_flag(run_cli, cr13_artifact: Path) -> None:
    for argv in (
        ("--get-kvcache-num-blocks", "--set-kvcache-num-blocks", "12", "--model-id", cr13_artifact),
        ("--set-memory-budget", "0.2", "--model-id", cr13_artifact, "--get-kvcache-num-blocks"),
    ):
        out = run_cli(*argv)
        assert (out.returncode, out.stdout) == (0, "21\n"), out.stderr
        assert "ignored with --get-kvcache-num-blocks" in out.stderr
    assert _count(cr13_artifact) == 21


def test_set_with_output_dir_writes_a_copy(run_cli, cr13_artifact: Path, tmp_path: Path) -> None:
    out = run_cli("--set-kvcache-num-blocks", "12", "--model-id", cr13_artifact, "--output-dir", tmp_path / "small")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"Set kvcache_num_blocks to 12 for artifact at {tmp_path / 'small'}"
    assert (_count(cr13_artifact), _count(tmp_path / "small")) == (21, 12)


def test_compile_with_budget_and_count_is_refused_with_optimums_words(run_cli, tmp_path: Path) -> None:
    out = run_cli(
        "--model-id", "Qwen/Qwen3-0.6B", "-o", tmp_path / "x", "--memory_budget", "0.5", "--kvcache_num_blocks", "10"
    )
    assert out.returncode == 1
    assert "`memory_budget` and an explicit `kvcache_num_blocks` are mutually exclusive." in out.stderr
    assert not (tmp_path / "x").exists()
