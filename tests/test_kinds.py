"""Every model kind optimum-rbln 0.12.0 writes: one row each, described in words, resize offered or refused."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest
from kind_fixtures import EXPECTED_KINDS, KINDS, NO_KV_KINDS, materialize, simulated_llava

from rbln_artifact_studio.backends.choice import BackendChoice
from rbln_artifact_studio.core.fleet.artifact import open_artifact
from rbln_artifact_studio.core.fleet.fleet_report import render
from rbln_artifact_studio.core.fleet.scan import scan
from rbln_artifact_studio.core.location import LocalFolder
from rbln_artifact_studio.core.model.config_fields import block_bytes
from rbln_artifact_studio.core.model.kinds import NoKvCacheError, block_count
from rbln_artifact_studio.core.operations.resize import resize_in_place, resize_to_copy
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest

REFUSAL = "does not expose a top-level resizable kv-cache. Only decoder-only causal LM artifacts are supported."


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    root = tmp_path / "fleet"
    root.mkdir()
    for name in EXPECTED_KINDS:
        materialize(name, root / name)
    return root


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _changed_lines(before: bytes, after: bytes) -> list[str]:
    diff = difflib.unified_diff(before.decode().splitlines(), after.decode().splitlines(), lineterm="", n=0)
    return [line for line in diff if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def test_one_row_per_compiled_model_whatever_its_kind(fleet: Path) -> None:
    rows = {r.name: r for r in scan(fleet, use_cache=False)}
    assert sorted(rows) == sorted(EXPECTED_KINDS)  # the pipeline is one row, not text_encoder / unet / vae
    for name, (kind, _) in EXPECTED_KINDS.items():
        row = rows[name]
        assert row.kind == kind, name
        assert row.status.value == "ok", (name, row.problems)
        assert row.npu == "RBLN-CA25"
        assert row.batch_size is not None
    for name in NO_KV_KINDS:
        assert rows[name].kvcache_num_blocks is None and rows[name].kv_bytes_per_npu is None
        note = rows[name].kv_note
        assert note and "resiz" in note, name
    whisper_note, bert_note = rows["whisper"].kv_note or "", rows["bert"].kv_note or ""
    assert "encoder-decoder" in whisper_note and "kvcache_num_blocks=2" in whisper_note
    assert "no KV cache" in bert_note
    assert rows["stable_diffusion"].batch_size == 1  # the text encoder's; the unet's 2 is in the details


def test_the_markdown_report_tells_artifacts_apart_by_path_and_kind(fleet: Path) -> None:
    report = render(scan(fleet, use_cache=False), "markdown")
    header = report.splitlines()[0]
    assert "| Kind |" in header and header.endswith("| Path |")
    pipeline = next(line for line in report.splitlines() if line.startswith("| stable_diffusion |"))
    assert str(fleet / "stable_diffusion") in pipeline and "diffusers pipeline" in pipeline
    assert "no KV cache" in pipeline or "nothing to resize" in pipeline


def test_a_vlm_row_shows_its_language_models_kv_cache(fleet: Path) -> None:
    row = next(r for r in scan(fleet, use_cache=False) if r.name == "llava")
    lm = json.loads((KINDS / "llava" / "language_model" / "rbln_config.json").read_text())
    nested = json.loads((KINDS / "llava" / "rbln_config.json").read_text())["language_model"]
    assert nested == lm  # as optimum-rbln writes them: the same config twice
    per_block = sum(block_bytes(m["shape"], m.get("dtype", "bfloat16")) for m in lm["cache_metas"])
    assert all(m.get("layer_type", "full_attention") == "full_attention" for m in lm["cache_metas"])  # none fixed
    fixed = 0
    assert row.kvcache_num_blocks == lm["kvcache_num_blocks"]
    assert (row.num_min_blocks, row.num_full_blocks) == (1, 1)  # eager, batch 1: floor = full = 1
    assert row.kv_bytes_per_npu == per_block * lm["kvcache_num_blocks"] + fixed
    assert row.model == "LlavaForConditionalGeneration" or row.model is not None


def test_details_describe_kinds_without_a_kv_cache(fleet: Path) -> None:
    with pytest.raises(NoKvCacheError) as caught:
        open_artifact(fleet / "stable_diffusion")
    description = caught.value.description
    assert description.kind.value == "diffusers pipeline"
    assert description.cls_name == "RBLNStableDiffusionPipeline"
    parts = {p.name: p for p in description.parts}
    assert set(parts) == {"text_encoder", "unet", "vae"}
    assert parts["unet"].cls_name == "RBLNUNet2DConditionModelConfig" and parts["unet"].batch_size == 2
    assert parts["vae"].graphs == ("decoder",)
    assert REFUSAL in str(caught.value)


def test_a_missing_component_graph_is_invalid(fleet: Path) -> None:
    (fleet / "stable_diffusion" / "unet" / "compiled_model.rbln").unlink()
    row = next(r for r in scan(fleet, use_cache=False) if r.name == "stable_diffusion")
    assert row.status.value == "invalid"
    assert "Expected compiled graph 'unet/compiled_model.rbln' is missing." in row.problems


@pytest.mark.parametrize("name", NO_KV_KINDS)
def test_kinds_without_a_resizable_cache_are_refused_and_untouched(fleet: Path, name: str) -> None:
    before = _tree(fleet / name)
    with pytest.raises(NoKvCacheError, match="does not expose a top-level resizable kv-cache"):
        block_count(fleet / name)
    with pytest.raises(NoKvCacheError):
        resize_in_place(fleet / name, 1)
    with pytest.raises(NoKvCacheError):
        resize_to_copy(fleet / name, fleet.parent / f"{name}-copy", 1)
    assert _tree(fleet / name) == before
    assert not (fleet.parent / f"{name}-copy").exists()


def test_a_simulated_vlm_resizes_subfolder_and_nested_section_together(tmp_path: Path) -> None:
    vlm = simulated_llava(tmp_path / "llava")
    parent_before = (vlm / "rbln_config.json").read_bytes()
    lm_before = (vlm / "language_model" / "rbln_config.json").read_bytes()
    artifact = open_artifact(vlm)
    assert artifact.kind.value == "multimodal" and artifact.is_simulated
    old, floor = artifact.config.kvcache_num_blocks, artifact.config.num_min_blocks
    assert block_count(vlm) == old and old > floor

    result = resize_in_place(vlm, floor)

    assert (result.previous, result.target) == (old, floor)
    parent = json.loads((vlm / "rbln_config.json").read_text())
    lm = json.loads((vlm / "language_model" / "rbln_config.json").read_text())
    assert parent["language_model"]["kvcache_num_blocks"] == lm["kvcache_num_blocks"] == floor
    # Each file's diff is the count line only, in the layout optimum-rbln wrote (indent 2, no final newline).
    assert _changed_lines(parent_before, (vlm / "rbln_config.json").read_bytes()) == [
        f'-    "kvcache_num_blocks": {old},',
        f'+    "kvcache_num_blocks": {floor},',
    ]
    assert _changed_lines(lm_before, (vlm / "language_model" / "rbln_config.json").read_bytes()) == [
        f'-  "kvcache_num_blocks": {old},',
        f'+  "kvcache_num_blocks": {floor},',
    ]
    reopened = open_artifact(vlm)
    assert reopened.config.kvcache_num_blocks == floor and reopened.status.value == "ok"


def test_resizing_the_language_model_folder_keeps_the_parent_in_step(tmp_path: Path) -> None:
    vlm = simulated_llava(tmp_path / "llava")
    old = block_count(vlm)
    resize_in_place(vlm / "language_model", old - 1)
    parent = json.loads((vlm / "rbln_config.json").read_text())
    assert parent["language_model"]["kvcache_num_blocks"] == old - 1 == block_count(vlm / "language_model")


def test_a_vlm_resized_to_a_copy_leaves_the_source_alone(tmp_path: Path) -> None:
    vlm = simulated_llava(tmp_path / "llava")
    before = _tree(vlm)
    old = block_count(vlm)
    out = resize_to_copy(vlm, tmp_path / "llava-small", old - 1).path
    assert _tree(vlm) == before
    assert block_count(out) == old - 1
    assert json.loads((out / "rbln_config.json").read_text())["language_model"]["kvcache_num_blocks"] == old - 1
    assert (out / "vision_tower" / "compiled_model.rbln").is_file() and open_artifact(out).status.value == "ok"


def test_a_vlm_whose_copies_disagree_is_flagged_and_a_resize_repairs_it(tmp_path: Path) -> None:
    vlm = simulated_llava(tmp_path / "llava")
    old = block_count(vlm)
    raw = json.loads((vlm / "rbln_config.json").read_text())
    raw["language_model"]["kvcache_num_blocks"] = old - 1  # as a crash between the two renames leaves it
    (vlm / "rbln_config.json").write_text(json.dumps(raw, indent=2))
    artifact = open_artifact(vlm)
    assert artifact.config.kvcache_num_blocks == old  # the subfolder's count is the one optimum-rbln loads
    assert any("Resize again to bring them in step" in p.message for p in artifact.problems)
    resize_in_place(vlm, old)  # same count: still rewrites the nested copy
    assert json.loads((vlm / "rbln_config.json").read_text())["language_model"]["kvcache_num_blocks"] == old
    assert open_artifact(vlm).status.value == "ok"


def test_a_real_compiler_vlm_is_refused_with_the_reason(fleet: Path) -> None:
    from rbln_artifact_studio.backends.registry import resize_artifact
    from rbln_artifact_studio.core.errors import StudioError

    before = _tree(fleet / "llava")
    with pytest.raises(StudioError, match="resizes only top-level decoder-only artifacts"):
        resize_artifact(ResizeRequest(LocalFolder(fleet / "llava"), target=1, backend=BackendChoice.AUTO))
    with pytest.raises(StudioError, match="leave the language_model section"):
        resize_artifact(
            ResizeRequest(LocalFolder(fleet / "llava" / "language_model"), target=1, backend=BackendChoice.OPTIMUM)
        )
    assert _tree(fleet / "llava") == before


# ---- CLI ------------------------------------------------------------------------------------------------


def test_cli_inspect_describes_a_kind_without_a_cache(run_cli, fleet: Path) -> None:
    out = run_cli("inspect", fleet / "whisper")
    assert out.returncode == 0, out.stderr
    assert "encoder-decoder" in out.stdout and "RBLNWhisperForConditionalGenerationConfig" in out.stdout
    assert "encoder.rbln, decoder.rbln" in out.stdout and "RBLN-CA25" in out.stdout and "batch 1" in out.stdout
    data = json.loads(run_cli("inspect", fleet / "stable_diffusion", "--json").stdout)
    assert data["kind"] == "diffusers pipeline" and data["resizable"] is False
    assert [p["name"] for p in data["parts"]] == ["text_encoder", "unet", "vae"]


@pytest.mark.parametrize("name", ["whisper", "t5", "bert", "stable_diffusion", "llava"])
def test_cli_refuses_like_optimum_rbln_cli(run_cli, fleet: Path, name: str) -> None:
    given = f"{fleet}/{name}"
    cls_name = EXPECTED_KINDS[name][1]
    if name == "llava":  # real-compiler graphs: refused with the reason, not optimum's blanket text
        out = run_cli("--set-kvcache-num-blocks", "1", "--model-id", given)
        assert out.returncode == 1 and "leave the language_model section" in out.stderr
        return
    for argv in (
        ("--get-kvcache-num-blocks", "--model-id", given),
        ("--set-kvcache-num-blocks", "1", "--model-id", given),
        ("--set-memory-budget", "0.5", "--model-id", given, "--output-dir", fleet.parent / "copy"),
    ):
        out = run_cli(*argv)
        assert out.returncode == 1, out
        assert f"The model at '{given}' ({cls_name}) {REFUSAL}" in out.stderr
    assert not (fleet.parent / "copy").exists()


def test_cli_get_reads_a_vlms_language_model(run_cli, tmp_path: Path) -> None:
    vlm = simulated_llava(tmp_path / "llava")
    count = json.loads((vlm / "language_model" / "rbln_config.json").read_text())["kvcache_num_blocks"]
    assert run_cli("--get-kvcache-num-blocks", "--model-id", vlm).stdout.strip() == str(count)
    out = run_cli("--set-kvcache-num-blocks", str(count - 1), "--model-id", vlm)
    assert out.returncode == 0, out.stderr
    assert json.loads((vlm / "rbln_config.json").read_text())["language_model"]["kvcache_num_blocks"] == count - 1


def test_cli_serving_reads_a_vlms_language_model(run_cli, tmp_path: Path) -> None:
    vlm = simulated_llava(tmp_path / "llava")
    data = json.loads(run_cli("serving", vlm, "--json").stdout)
    assert data["kvcache_num_blocks"] == block_count(vlm) and data["errors"] == []


def test_a_vlm_row_follows_its_language_models_own_file(tmp_path: Path) -> None:
    """optimum-rbln loads language_model/rbln_config.json: a change there alone (optimum-rbln-cli run on the
    subfolder) shows on the row, cached or not, with the nested copy flagged."""
    vlm = simulated_llava(tmp_path / "fleet" / "llava")
    old = block_count(vlm)
    assert next(iter(scan(tmp_path / "fleet"))).kvcache_num_blocks == old  # fills the scan cache
    lm_file = vlm / "language_model" / "rbln_config.json"
    lm = json.loads(lm_file.read_text())
    lm["kvcache_num_blocks"] = old - 1
    lm_file.write_text(json.dumps(lm, indent=2))
    row = next(iter(scan(tmp_path / "fleet", verify=False)))  # the fast pass: the cached verdict is stale now
    assert row.kvcache_num_blocks == old - 1
    assert row.status.value == "checking"
    assert any("Resize again to bring them in step" in p for p in row.problems)


def test_a_pipe_in_place_of_model_index_never_hangs_a_scan(tmp_path: Path) -> None:
    import os

    folder = tmp_path / "root" / "sd"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "model_index.json")
    assert list(scan(tmp_path / "root", use_cache=False)) == []
