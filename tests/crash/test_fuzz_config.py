"""Property-based and mutation fuzzing of rbln_config.json: every reader ends in a StudioError or a result,
never a traceback, a hang or a write (see badinput.read_everything)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from badinput import SPECIAL, Raw, dumps, fuzz, mutate_bytes, mutate_mapping, read_everything
from harness import SHAPE, tiny_model_config, tree_digest
from hypothesis import strategies as st

from rbln_artifact_studio.core.errors import ConfigError
from rbln_artifact_studio.core.model.rbln_config import CONFIG_NAME
from rbln_artifact_studio.core.simulator.compiler import CompileRequest, plan_compile, write_artifact
from rbln_artifact_studio.core.storage.jsonfile import read_block_count

EXTRA_KEYS = ["tensor_parallel_size", "kvcache_metas", "_meta", "num_devices", "npu", "kvcache_block_size"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One artifact whose rbln_config.json each example replaces (readers never write: that is checked)."""
    root = tmp_path_factory.mktemp("fuzz-config")
    (root / "model").mkdir()
    (root / "model" / "config.json").write_text(json.dumps(tiny_model_config(1)))
    options = {k.lstrip("-"): int(v) for k, v in zip(SHAPE[::2], SHAPE[1::2], strict=True)}
    plan = plan_compile(CompileRequest(model_id=str(root / "model"), **options))  # type: ignore[arg-type]
    (root / "scan").mkdir()
    return write_artifact(plan, root / "scan" / "art")


def _check(folder: Path, data: bytes) -> None:
    (folder / CONFIG_NAME).write_bytes(data)
    before = tree_digest(folder.parent)
    problems = read_everything(folder)
    assert tree_digest(folder.parent) == before
    assert problems == [], f"config {data[:400]!r}...: {problems}"


def mutated_config(folder: Path, data: st.DataObject) -> None:
    doc = mutate_mapping(_pristine(folder), data.draw, EXTRA_KEYS)
    _check(folder, mutate_bytes(dumps(doc), data.draw))


test_mutated_config, test_mutated_config_deep = fuzz(quick=100, deep=1000)(mutated_config)


_PRISTINE: dict[Path, dict[str, object]] = {}


def _pristine(folder: Path) -> dict[str, object]:
    if folder not in _PRISTINE:
        _PRISTINE[folder] = json.loads((folder / CONFIG_NAME).read_text())
    return _PRISTINE[folder]


def test_number_with_thousands_of_digits(folder: Path) -> None:
    """Found by test_every_special_value_in_every_key: Python refuses to convert integers of more than 4,300 digits with a
    plain ValueError, which escaped open, scan (whose summarize never raises) and the CLI as an internal error."""
    base = _pristine(folder)
    _check(folder, dumps({**base, "batch_size": Raw("9" * 5000)}))
    with pytest.raises(ConfigError, match="thousands of digits"):
        read_block_count(folder)
    _check(folder, dumps(base))


@pytest.mark.slow
@pytest.mark.parametrize(
    "key",
    [
        "kvcache_num_blocks",
        "batch_size",
        "max_seq_len",
        "kvcache_block_size",
        "kvcache_partition_len",
        "num_devices",
        "tensor_parallel_size",
        "npu",
        "attn_impl",
        "cache_metas",
        "kvcache_metas",
        "_compile_cfgs",
        "dtype",
    ],
)
def test_every_special_value_in_every_key(folder: Path, key: str) -> None:
    base = _pristine(folder)
    for token in SPECIAL:
        _check(folder, dumps({**base, key: Raw(token)}))
        metas = json.loads(json.dumps(base["cache_metas"]))
        for meta_key in ("shape", "dtype", "layer_type", "is_auto", "name"):
            metas[0][meta_key] = Raw(token)
            _check(folder, dumps({**base, "cache_metas": metas}))
            metas = json.loads(json.dumps(base["cache_metas"]))
