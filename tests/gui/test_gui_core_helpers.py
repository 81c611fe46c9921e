"""The Qt-free modules behind the desktop app: rescans, display data, default names, CLI commands, demo."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rbln_artifact_studio.cli.commands.compile import compile_request
from rbln_artifact_studio.cli.main import build_parser, translate_optimum_argv
from rbln_artifact_studio.core.demo import DEMO_ARTIFACTS, build_demo, missing_demo_artifacts
from rbln_artifact_studio.core.display.commandline import compile_argv, resize_argv, shell_text
from rbln_artifact_studio.core.display.naming import compiled_dir, resized_copy_dir
from rbln_artifact_studio.core.display.presentation import block_facts, usage_segments
from rbln_artifact_studio.core.fleet.artifact import Status, open_artifact
from rbln_artifact_studio.core.fleet.rescan import rescan_folder
from rbln_artifact_studio.core.fleet.scan import scan
from rbln_artifact_studio.core.model.modelspec import resolve_model
from rbln_artifact_studio.core.simulator.compile_preview import preview_compile
from rbln_artifact_studio.core.simulator.compiler import CompileRequest, plan_compile


def _parse(argv: list[str]):
    assert argv[0] == "rbln-studio-cli"
    return build_parser().parse_args(translate_optimum_argv(argv[1:]))


# ---- rescan -------------------------------------------------------------------------------------------


def test_rescan_of_the_root_reads_only_new_subfolders(workspace: Path, cr13_artifact: Path) -> None:
    first = rescan_folder(workspace, [])
    paths = sorted(s.path for s in first.summaries())
    assert paths == sorted([str(cr13_artifact), str(workspace / "qwen3-8b-ca25x4")])
    shutil.copytree(cr13_artifact, workspace / "group" / "copy")
    again = rescan_folder(workspace, paths)
    assert again.removed == []
    assert [s.path for s in again.summaries()] == [str(workspace / "group" / "copy")]
    assert str(workspace / "group") in again.watch


def test_rescan_reports_deleted_and_no_longer_artifact_folders(workspace: Path, cr13_artifact: Path) -> None:
    known = [s.path for s in scan(workspace)]
    shutil.rmtree(cr13_artifact)
    (workspace / "qwen3-8b-ca25x4" / "rbln_config.json").unlink()
    result = rescan_folder(workspace, known)
    assert sorted(result.removed) == sorted(known)
    gone = rescan_folder(cr13_artifact, known)
    assert gone.removed == [str(cr13_artifact)]


def test_rescan_of_an_artifact_reads_its_new_count(cr13_artifact: Path) -> None:
    config = cr13_artifact / "rbln_config.json"
    raw = json.loads(config.read_text())
    config.write_text(json.dumps({**raw, "kvcache_num_blocks": 12}))
    rows = list(rescan_folder(cr13_artifact, [str(cr13_artifact)]).summaries())
    assert [(r.path, r.kvcache_num_blocks) for r in rows] == [(str(cr13_artifact), 12)]


# ---- display data -------------------------------------------------------------------------------------


def test_segments_add_up_to_the_chiplets_dram(cr13_artifact: Path) -> None:
    breakdown = open_artifact(cr13_artifact).breakdown()
    assert breakdown is not None and len(breakdown.usages) == 4  # Rebel100: one bar per chiplet
    for usage in breakdown.usages:
        segments = {s.key: s.nbytes for s in usage_segments(usage)}
        assert sum(segments.values()) == usage.total == 36 * 2**30
        assert segments["kv"] == usage.kv and segments["weights"] == usage.weights


def test_block_facts_translate_blocks_into_tokens_and_sequences(cr13_artifact: Path) -> None:
    facts = block_facts(open_artifact(cr13_artifact).config)
    assert (facts.num_blocks, facts.floor, facts.full) == (21, 9, 40)
    assert facts.tokens == 21 * 8192
    assert facts.sequences == 4  # 5 blocks per 40,960-token sequence
    assert "172,032 tokens" in facts.meaning


# ---- names --------------------------------------------------------------------------------------------


def test_default_copy_name_replaces_an_earlier_count(tmp_path: Path) -> None:
    assert resized_copy_dir(tmp_path / "qwen3-8b-cr13", 12) == tmp_path / "qwen3-8b-cr13-kv12"
    assert resized_copy_dir(tmp_path / "qwen3-8b-cr13-kv12", 15) == tmp_path / "qwen3-8b-cr13-kv15"
    assert compiled_dir(tmp_path, "Qwen/Qwen3-8B", "RBLN-CA25", 4, 14) == tmp_path / "qwen3-8b-4x-rbln-ca25-kv14"


# ---- command lines ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"npu": "RBLN-CR13", "memory_budget": "0.3"},
        {"npu": "RBLN-CA25", "num_devices": 4, "memory_budget": "50%"},
        {"npu": "RBLN-CA25", "num_devices": 4, "kvcache_num_blocks": 12, "prefill_chunk_size": 256},
        {"npu": "RBLN-CA25", "attn_impl": "eager", "max_seq_len": 4096, "kvcache_partition_len": None},
    ],
)
def test_compile_command_parses_to_the_same_request(tmp_path: Path, options: dict[str, object]) -> None:
    base = {"model_id": "Qwen/Qwen3-8B", "batch_size": 8, "max_seq_len": 40_960, "kvcache_partition_len": 8192}
    request = CompileRequest(**{**base, **options})  # type: ignore[arg-type]
    args = _parse(compile_argv(request, tmp_path / "out dir"))
    assert args.command == "compile" and args.output_dir == str(tmp_path / "out dir")
    assert compile_request(args) == request


def test_resize_commands_parse(tmp_path: Path) -> None:
    args = _parse(resize_argv(tmp_path / "a", target=12, output_dir=tmp_path / "a-kv12"))
    assert (args.command, args.dir, args.num_blocks, args.output_dir) == (
        "set-kvcache-num-blocks",
        str(tmp_path / "a"),
        12,
        str(tmp_path / "a-kv12"),
    )
    args = _parse(resize_argv(tmp_path / "a", budget_text="0.2"))
    assert (args.command, args.budget, args.output_dir) == ("set-memory-budget", "0.2", None)
    with pytest.raises(ValueError):
        resize_argv(tmp_path / "a", target=3, budget_text="0.2")


def test_the_shown_compile_command_does_what_the_gui_would(tmp_path: Path, run_cli) -> None:
    request = CompileRequest("Qwen/Qwen3-8B", npu="RBLN-CR13", batch_size=8, max_seq_len=40_960, memory_budget="0.3")
    out = tmp_path / "from shell"
    line = shell_text(compile_argv(request, out))
    import shlex

    done = run_cli(*shlex.split(line)[1:])
    assert done.returncode == 0, done.stderr
    assert (
        json.loads((out / "rbln_config.json").read_text())["kvcache_num_blocks"]
        == plan_compile(request).num_blocks
        == 21
    )


def test_the_shown_resize_command_does_what_the_gui_would(cr13_artifact: Path, run_cli) -> None:
    out = resized_copy_dir(cr13_artifact, 12)
    done = run_cli(*resize_argv(cr13_artifact, target=12, output_dir=out)[1:])
    assert done.returncode == 0, done.stderr
    assert json.loads((out / "rbln_config.json").read_text())["kvcache_num_blocks"] == 12


# ---- compile preview ----------------------------------------------------------------------------------


def test_preview_keeps_the_curve_when_the_budget_is_too_small() -> None:
    model = resolve_model("Qwen/Qwen3-8B")
    shape = {"npu": "RBLN-CR13", "batch_size": 8, "max_seq_len": 40_960, "kvcache_partition_len": 8192}
    ok = preview_compile(CompileRequest("Qwen/Qwen3-8B", memory_budget="0.3", **shape), model)  # type: ignore[arg-type]
    low = preview_compile(CompileRequest("Qwen/Qwen3-8B", memory_budget="0.195", **shape), model)  # type: ignore[arg-type]
    assert ok.plan is not None and ok.plan.num_blocks == 21 and ok.error is None
    assert low.plan is None and low.error is not None and "only 8" in low.error and "at least 9" in low.error
    assert low.curve == ok.curve and low.curve[-1].blocks == 40
    assert (low.floor, low.full) == (9, 40)
    bad = preview_compile(
        CompileRequest("Qwen/Qwen3-8B", npu="RBLN-CR13", max_seq_len=40_000, kvcache_partition_len=8192), model
    )
    assert bad.error is not None and "multiple of kvcache_partition_len" in bad.error and bad.curve == []


# ---- demo ---------------------------------------------------------------------------------------------


def test_demo_workspace_is_built_once_and_shows_a_warning(tmp_path: Path) -> None:
    written = build_demo(tmp_path / "demo")
    assert len(written) == len(DEMO_ARTIFACTS) and missing_demo_artifacts(tmp_path / "demo") == []
    assert build_demo(tmp_path / "demo") == []
    rows = {s.name: s for s in scan(tmp_path / "demo")}
    assert rows["qwen3-8b-rbln-cr13"].kvcache_num_blocks == 21
    assert rows["qwen3-8b-4x-rbln-ca25"].kvcache_num_blocks == 14
    assert rows["qwen3-0.6b-eager-rbln-ca25"].attn_impl == "eager"
    assert rows["llama-3.2-1b-rbln-ca25-kv18"].status is Status.WARNING
    assert sum(s.status is Status.OK for s in rows.values()) == len(DEMO_ARTIFACTS) - 1
