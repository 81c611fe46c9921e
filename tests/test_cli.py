"""The installed rbln-studio-cli end to end: optimum-rbln-cli spellings, JSON output, errors and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REFERENCE = ["--batch_size", "8", "--max_seq_len", "40960", "--kvcache_partition_len", "8192"]


def test_version_and_help(run_cli) -> None:
    out = run_cli("--version")
    assert out.returncode == 0 and out.stdout.startswith("rbln-studio-cli ")
    for command in ("inspect", "scan", "compile", "set-kvcache-num-blocks", "presets"):
        assert run_cli(command, "--help").returncode == 0
        assert run_cli(command, "--version").stdout.startswith("rbln-studio-cli ")


def test_compile_like_optimum_rbln_cli(run_cli, tmp_path: Path) -> None:
    out = run_cli(
        "--model-id",
        "Qwen/Qwen3-8B",
        "--output-dir",
        tmp_path / "rbln-Qwen3-8B",
        "--npu",
        "RBLN-CR13",
        "--num_devices",
        "1",
        *REFERENCE,
        "--memory-budget",
        "0.3",
    )
    assert out.returncode == 0, out.stderr
    got = run_cli("--get-kvcache-num-blocks", "--model-id", tmp_path / "rbln-Qwen3-8B")
    assert got.stdout == "21\n"
    assert run_cli("get-kvcache-num-blocks", tmp_path / "rbln-Qwen3-8B").stdout == "21\n"


def test_hyphenated_and_alias_spellings(run_cli, tmp_path: Path) -> None:
    out = run_cli(
        "compile",
        "--model-id",
        "Qwen/Qwen3-8B",
        "-o",
        tmp_path / "a",
        "--tensor-parallel-size",
        "4",
        "--batch-size",
        "8",
        "--max-seq-len",
        "40960",
        "--kvcache-partition-len",
        "8192",
        "--memory_budget",
        "50%",
        "--json",
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert (result["kvcache_num_blocks"], result["npu"], result["num_devices"]) == (14, "RBLN-CA25", 4)


def test_floor_error_is_one_line_exit_1_and_writes_nothing(run_cli, tmp_path: Path) -> None:
    out = run_cli(
        "compile",
        "--model-id",
        "Qwen/Qwen3-8B",
        "-o",
        tmp_path / "x",
        "--npu",
        "RBLN-CA25",
        "--num_devices",
        "4",
        *REFERENCE,
        "--memory-budget",
        "0.31",
    )
    assert out.returncode == 1
    assert out.stderr.count("\n") == 1 and "only 3 blocks can be allocated, but at least 9" in out.stderr
    assert "Traceback" not in out.stderr and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("budget", ["abc", "-1GB", "1e400", "nan", "inf", "150%", "0", "", " "])
def test_bad_budgets_are_clear_errors(run_cli, tmp_path: Path, budget: str) -> None:
    out = run_cli(
        "compile", "--model-id", "Qwen/Qwen3-8B", "-o", tmp_path / "x", *REFERENCE, f"--memory-budget={budget}"
    )
    assert out.returncode == 1 and out.stderr.startswith("error: ") and "Traceback" not in out.stderr
    assert "memory_budget" in out.stderr and out.stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_budget_and_count_are_mutually_exclusive_as_in_optimum(run_cli, tmp_path: Path) -> None:
    out = run_cli(
        "compile",
        "--model-id",
        "Qwen/Qwen3-8B",
        "-o",
        tmp_path / "x",
        "--memory-budget",
        "0.5",
        "--kvcache_num_blocks",
        "10",
    )
    # optimum-rbln-cli's answer: its config class raises the "mutually exclusive" error, exit 1
    assert out.returncode == 1 and "are mutually exclusive" in out.stderr
    assert not (tmp_path / "x").exists()


def test_int_one_budget_warns(run_cli, tmp_path: Path) -> None:
    out = run_cli(
        "compile",
        "--model-id",
        "Qwen/Qwen3-8B",
        "-o",
        tmp_path / "x",
        "--npu",
        "RBLN-CR13",
        *REFERENCE,
        "--memory-budget",
        "1",
    )
    assert (
        out.returncode == 1
        and "the weights alone, 15.27 GiB (16,391,340,032 B) per NPU, exceed the memory_budget of 1 byte per NPU"
        in out.stderr
    )
    assert "memory_budget=1 is read as 1 byte, not 100% of the NPU" in out.stderr


def test_set_blocks_in_place_and_to_copy(run_cli, cr13_artifact: Path, tmp_path: Path) -> None:
    out = run_cli("--set-kvcache-num-blocks", "12", "--model-id", cr13_artifact, "--output-dir", tmp_path / "c12")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"Set kvcache_num_blocks to 12 for artifact at {tmp_path / 'c12'}"
    assert run_cli("get-kvcache-num-blocks", cr13_artifact).stdout == "21\n"
    out = run_cli("set-kvcache-num-blocks", cr13_artifact, "30")
    # 30 blocks fit the NPU (the allocation tables say so): no warning contradicts that.
    assert out.returncode == 0 and "may fail to allocate" not in out.stderr, out.stderr
    assert run_cli("get-kvcache-num-blocks", cr13_artifact).stdout == "30\n"
    out = run_cli("set-kvcache-num-blocks", cr13_artifact, "1000")  # 281 GiB of KV per chiplet: impossible
    assert out.returncode == 1 and "does not fit RBLN-CR13" in out.stderr
    assert "The largest count that fits is" in out.stderr and "Nothing was changed" not in out.stdout
    assert run_cli("get-kvcache-num-blocks", cr13_artifact).stdout == "30\n"


def test_set_below_floor_fails_clearly(run_cli, cr13_artifact: Path) -> None:
    out = run_cli("set-kvcache-num-blocks", cr13_artifact, "8")
    assert out.returncode == 1
    assert out.stderr == (
        "error: kvcache_num_blocks=8 is below the minimum required for the full sequence length (num_min_blocks=9).\n"
    )


def test_set_memory_budget(run_cli, cr13_artifact: Path) -> None:
    out = run_cli("--set-memory-budget", "0.5", "--model-id", cr13_artifact)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "memory_budget 0.5 fits kvcache_num_blocks=40"


def test_inspect_json_shape(run_cli, ca25_artifact: Path) -> None:
    out = run_cli("inspect", ca25_artifact, "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    for key in (
        "path",
        "config",
        "kvcache_num_blocks",
        "num_min_blocks",
        "num_full_blocks",
        "npu",
        "num_devices",
        "graphs",
        "breakdown",
    ):
        assert key in data
    assert (data["kvcache_num_blocks"], data["num_min_blocks"], data["num_full_blocks"]) == (14, 9, 40)
    prefill = data["graphs"]["prefill"]
    assert len(prefill["alloc_per_chiplet_by_key"]["Weight"]) == 4  # four nodes, one chiplet each
    kv = prefill["dram_tensor_sizes"]["past_key_values_0"]
    assert kv == [[14 * 4 * 2**20]] * 4
    assert len(data["breakdown"]["chiplets"]) == 4


def test_inspect_text_and_unknown_allocations(run_cli, cr13_artifact: Path) -> None:
    for rbln in cr13_artifact.glob("*.rbln"):
        rbln.write_bytes(b"real compiler output")
    out = run_cli("inspect", cr13_artifact, "--json")
    data = json.loads(out.stdout)
    assert data["graphs"] is None and data["breakdown"] is None and "rebel" in data["allocations_unknown_reason"]
    assert data["kvcache_num_blocks"] == 21
    text = run_cli("inspect", cr13_artifact).stdout
    assert "DRAM         unknown" in text


def test_scan_json(run_cli, cr13_artifact: Path, ca25_artifact: Path) -> None:
    out = run_cli("scan", cr13_artifact.parent, "--json")
    rows = json.loads(out.stdout)
    assert sorted((r["name"], r["kvcache_num_blocks"]) for r in rows) == [
        ("qwen3-8b-ca25x4", 14),
        ("qwen3-8b-cr13", 21),
    ]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["inspect", "/nonexistent/folder"], "is not a folder"),
        (["get-kvcache-num-blocks", "/nonexistent"], "does not exist"),
        (["compile", "--model-id", "nope/nothing", "-o", "/tmp/never-written"], "no bundled preset"),
        (["compile", "--model-id", "Qwen/Qwen3-8B", "-o", "/tmp/never", "--npu", "H100"], "Unknown npu name: H100"),
    ],
)
def test_bad_input_is_one_line(run_cli, args: list[str], needle: str) -> None:
    out = run_cli(*args)
    assert out.returncode == 1 and needle in out.stderr and out.stderr.count("\n") == 1


def test_usage_error_exits_2(run_cli) -> None:
    assert run_cli("set-kvcache-num-blocks", "dir", "abc").returncode == 2
    assert run_cli("frobnicate").returncode == 2


def test_presets(run_cli) -> None:
    rows = json.loads(run_cli("presets", "--json").stdout)
    assert "Qwen/Qwen3-8B" in {r["model_id"] for r in rows} and len(rows) == 7


def test_a_budget_below_the_weights_says_so_with_both_numbers(run_cli, cr13_artifact: Path, tmp_path: Path) -> None:
    out = run_cli("compile", "--model-id", "Qwen/Qwen3-8B", "-o", tmp_path / "x", "--npu", "RBLN-CR13", *REFERENCE,
                  "--memory-budget", "0.01")  # fmt: skip
    assert out.returncode == 1 and "only 1 blocks" not in out.stderr
    assert (
        "the weights alone, 15.27 GiB (16,391,340,032 B) per NPU, exceed the memory_budget of 1.4 GiB "
        "(1,503,238,553 B) per NPU, so no KV cache block can be allocated" in out.stderr
    )
    out = run_cli("set-memory-budget", cr13_artifact, "0.01", "--output-dir", tmp_path / "y")
    assert out.returncode == 1 and "the weights alone, 15.27 GiB" in out.stderr and not (tmp_path / "y").exists()


def test_a_name_too_long_is_said_not_an_internal_error(run_cli, cr13_artifact: Path, tmp_path: Path) -> None:
    """ENAMETOOLONG (a 300-byte name) is the user's path, not a bug: named, with the limit, exit 1."""
    long_name = "a" * 300
    for args in (
        ["inspect", tmp_path / long_name],
        ["set-kvcache-num-blocks", cr13_artifact, 20, "--output-dir", tmp_path / long_name],
    ):
        done = run_cli(*args)
        assert done.returncode == 1 and "internal error" not in done.stderr, done.stderr
        assert done.stderr.startswith(f"error: The path {tmp_path}/{'a' * 24}… is too long")
        assert "is too long (one of its names is 300 bytes long, and a file system allows 255)" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [cr13_artifact.name]  # nothing written beside it
