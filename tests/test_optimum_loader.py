"""Everything we write loads in optimum-rbln 0.12.0: compiles, resizes in place and resizes to a copy, every kind.

The loader is tests/optimum_loader.py (the package's rules; its own import needs torch and rebel). Its cases
below are outcomes the real package gave on the same inputs. With RBLN_STUDIO_OPTIMUM_PYTHON set to a Python
that imports optimum.rbln (and a stand-in rebel), the real loader runs on the same folders too.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import REPO, compile_artifact
from kind_fixtures import EXPECTED_KINDS, KINDS, materialize, simulated_llava
from optimum_loader import LoaderError, load_config_file, load_model

from rbln_artifact_studio.core.fleet.artifact import open_artifact
from rbln_artifact_studio.core.model.kinds import block_count
from rbln_artifact_studio.core.operations.resize import resize_in_place, resize_to_copy

# ---- the reproduced rules give the real package's answers -----------------------------------------------


def _fixture_config(name: str) -> dict[str, object]:
    return json.loads((KINDS / name / "rbln_config.json").read_text())


@pytest.mark.parametrize("name", [n for n in EXPECTED_KINDS if n != "stable_diffusion"])
def test_every_fixture_loads(name: str, tmp_path: Path) -> None:
    load_model(materialize(name, tmp_path / name))


def test_every_pipeline_component_loads(tmp_path: Path) -> None:
    sd = materialize("stable_diffusion", tmp_path / "sd")
    for component in ("text_encoder", "unet", "vae"):
        load_model(sd / component)


# (fixture, change, the real package's message or None where it loads) - observed with optimum-rbln 0.12.0
REAL_OUTCOMES: list[tuple[str, Callable[[dict], None], str | None]] = [
    ("qwen3", lambda d: d.update(foo=1), "Unexpected arguments: dict_keys(['foo'])"),
    ("qwen3", lambda d: d.update(foo=1, bar=2), "Unexpected arguments: dict_keys(['foo', 'bar'])"),
    ("qwen3", lambda d: d.update(rbln_studio_simulator="0.1"), "dict_keys(['rbln_studio_simulator'])"),
    ("qwen3", lambda d: d.update(optimum_rbln_version="0.13.0", foo=1), "compiled with newer version"),
    ("qwen3", lambda d: d.update(npu="RBLN-CA25", num_devices=4), None),
    ("qwen3", lambda d: d.update(device=0, create_runtimes=False, timeout=60, activate_profiler=False), None),
    ("qwen3", lambda d: d.update(kvcache_metas=d.pop("cache_metas")), None),
    ("qwen3", lambda d: d.update(tensor_parallel_size=4), None),
    ("qwen3", lambda d: d.update(optimize_host_memory=True), None),
    ("qwen3", lambda d: d["cache_metas"][0].update(layer_type="mamba"), "Unknown cache `layer_type` 'mamba'"),
    ("qwen3", lambda d: d["cache_metas"][0].update(foo=1), None),
    ("qwen3", lambda d: d["_compile_cfgs"][0].update(foo=1), None),
    ("qwen3", lambda d: d.update(memory_budget=0.8), "are mutually exclusive"),
    ("qwen3", lambda d: d.update(cls_name="RBLNFooConfig"), "Configuration for RBLNFooConfig not found."),
    ("qwen3", lambda d: d.pop("cls_name"), "KeyError: 'cls_name'"),
    ("t5", lambda d: d.update(kvcache_num_blocks=1), "paged attention is not supported"),
    ("llava", lambda d: d.pop("language_model"), "Submodule language_model not found in rbln_config.json."),
    ("llava", lambda d: d["language_model"].update(foo=1), "Unexpected arguments: dict_keys(['foo'])"),
    ("llava", lambda d: d["language_model"].pop("cls_name"), "`cls_name` is required."),
    ("llava", lambda d: d.update(foo=1), "Unexpected arguments: dict_keys(['foo'])"),
]


@pytest.mark.parametrize(("name", "change", "expected"), REAL_OUTCOMES)
def test_the_rules_give_the_real_packages_answers(
    tmp_path: Path, name: str, change: Callable[[dict], None], expected: str | None
) -> None:
    config = copy.deepcopy(_fixture_config(name))
    change(config)
    (tmp_path / "rbln_config.json").write_text(json.dumps(config, indent=2))
    if expected is None:
        load_config_file(tmp_path)
    else:
        with pytest.raises(LoaderError, match=expected.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
            load_config_file(tmp_path)


def test_the_key_table_matches_the_published_wheel() -> None:
    """resources/optimum-rbln-configs.json is what tools/extract_optimum_configs.py reads from the wheel."""
    source = os.environ.get("RBLN_STUDIO_OPTIMUM_WHEEL_SRC")
    if not source:
        pytest.skip("set RBLN_STUDIO_OPTIMUM_WHEEL_SRC to an unpacked optimum-rbln 0.12.0 wheel to check the table")
    out = subprocess.run(
        [sys.executable, str(REPO / "tools" / "extract_optimum_configs.py"), source],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout) == json.loads((REPO / "resources" / "optimum-rbln-configs.json").read_text())


# ---- what we write loads ----------------------------------------------------------------------------------


def _written(kind: str, how: str, tmp_path: Path) -> tuple[Path, int]:
    """An artifact of `kind` we wrote, by compile / in-place resize / resize to a copy; its count."""
    if kind == "decoder-only":
        source = compile_artifact(tmp_path / "qwen3", npu="RBLN-CR13", memory_budget=0.3)
    else:
        source = simulated_llava(tmp_path / "llava")
    if how == "compile":
        return source, block_count(source)
    target = open_artifact(source).config.num_min_blocks
    if how == "in place":
        return resize_in_place(source, target).path, target
    return resize_to_copy(source, tmp_path / "copy", target).path, target


WRITES = [(kind, how) for kind in ("decoder-only", "multimodal") for how in ("compile", "in place", "copy")]


@pytest.mark.parametrize(("kind", "how"), WRITES)
def test_what_we_write_loads_with_our_count(tmp_path: Path, kind: str, how: str) -> None:
    folder, count = _written(kind, how, tmp_path)
    loaded = load_model(folder)
    if kind == "multimodal":
        assert loaded["language_model"]["kvcache_num_blocks"] == count
        assert load_config_file(folder)["language_model"]["kvcache_num_blocks"] == count  # nested copy in step
        for name in ("language_model", "vision_tower"):
            load_model(folder / name)
    else:
        assert loaded["kvcache_num_blocks"] == count
    artifact = open_artifact(folder)
    assert artifact.is_simulated and artifact.status.value == "ok", artifact.problems


def test_an_old_artifact_with_our_key_is_ours_and_a_resize_drops_the_key(tmp_path: Path) -> None:
    art = compile_artifact(tmp_path / "old", npu="RBLN-CR13", memory_budget=0.3)
    raw = json.loads((art / "rbln_config.json").read_text())
    raw = {**{k: v for k, v in raw.items() if k != "_compile_cfgs"}, "rbln_studio_simulator": "0.9.0"}
    raw["_compile_cfgs"] = json.loads((art / "rbln_config.json").read_text())["_compile_cfgs"]
    (art / "rbln_config.json").write_text(json.dumps(raw, indent=2) + "\n")
    with pytest.raises(LoaderError, match="rbln_studio_simulator"):
        load_config_file(art)
    artifact = open_artifact(art)
    assert artifact.is_simulated  # recognised by its .rbln containers, not by the key
    assert any("rbln_studio_simulator" in p.message and "a resize drops it" in p.message for p in artifact.problems)
    resize_in_place(art, artifact.config.num_min_blocks)
    assert "rbln_studio_simulator" not in json.loads((art / "rbln_config.json").read_text())
    load_model(art)
    assert open_artifact(art).status.value == "ok"


@pytest.mark.parametrize(("kind", "how"), WRITES)
def test_the_real_loader_agrees(tmp_path: Path, kind: str, how: str) -> None:
    python = os.environ.get("RBLN_STUDIO_OPTIMUM_PYTHON")
    if not python:
        pytest.skip("set RBLN_STUDIO_OPTIMUM_PYTHON to a Python that imports optimum.rbln 0.12.0 to run it here")
    folder, count = _written(kind, how, tmp_path)
    script = (
        "import sys, warnings; warnings.filterwarnings('ignore')\n"
        "from optimum.rbln import RBLNAutoConfig\n"
        "c = RBLNAutoConfig.from_pretrained(sys.argv[1])\n"
        "lm = getattr(c, 'language_model', None)\n"
        "print((lm or c).kvcache_num_blocks)\n"
    )
    target = folder / "language_model" if kind == "multimodal" else folder
    for path in {folder, target}:
        out = subprocess.run([python, "-c", script, str(path)], capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.strip().splitlines()[-1] == str(count)
    shutil.rmtree(tmp_path)
