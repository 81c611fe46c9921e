"""Configs optimum-rbln 0.12.0 would refuse are warnings that name the keys or versions; unknown caches stay unknown."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from kind_fixtures import materialize

from rbln_artifact_studio.core.errors import ResizeError
from rbln_artifact_studio.core.fleet.artifact import open_artifact
from rbln_artifact_studio.core.fleet.scan import scan
from rbln_artifact_studio.core.model import upstream
from rbln_artifact_studio.core.operations.resize import resize_in_place


def _edit(artifact: Path, **changes: object) -> None:
    path = artifact / "rbln_config.json"
    raw = json.loads(path.read_text())
    raw.update(changes)
    path.write_text(json.dumps(raw, indent=2) + "\n")


def _row(root: Path):
    return next(iter(scan(root, use_cache=False)))


@pytest.fixture
def installed_version() -> Iterator[None]:
    """No toolchain found (other tests may have run a fake optimum-rbln-cli), and none after the test either."""
    upstream.note_installed_version(None)
    yield
    upstream.note_installed_version(None)


def test_unknown_top_level_keys_are_a_warning_that_names_them(cr13_artifact: Path) -> None:
    _edit(cr13_artifact, my_team_note="keep", rope_fix=True)
    row = _row(cr13_artifact.parent)
    assert row.status.value == "warning"
    assert any("unexpected keys my_team_note, rope_fix" in p and "Unexpected arguments" in p for p in row.problems)
    assert row.kvcache_num_blocks == 21  # still read: a warning, not a refusal
    assert any("my_team_note" in p.message for p in open_artifact(cr13_artifact).problems)


def test_a_nested_section_is_checked_too(tmp_path: Path) -> None:
    llava = materialize("llava", tmp_path / "llava")
    raw = json.loads((llava / "rbln_config.json").read_text())
    raw["vision_tower"]["mystery"] = 1
    (llava / "rbln_config.json").write_text(json.dumps(raw, indent=2))
    row = _row(tmp_path)
    assert any("section 'vision_tower'" in p and "mystery" in p for p in row.problems)


def test_a_newer_optimum_rbln_version_is_a_warning(cr13_artifact: Path, installed_version: None) -> None:
    _edit(cr13_artifact, optimum_rbln_version="0.13.1")
    row = _row(cr13_artifact.parent)
    assert row.status.value == "warning"
    assert any("optimum-rbln 0.13.1, newer than optimum-rbln 0.12.0" in p for p in row.problems)
    upstream.note_installed_version("0.14.0")  # the toolchain found here is newer still: nothing to say
    assert not any("newer than" in p for p in _row(cr13_artifact.parent).problems)
    upstream.note_installed_version("0.11.2")
    assert any("newer than the installed optimum-rbln 0.11.2" in p for p in _row(cr13_artifact.parent).problems)


def test_an_unknown_cache_kind_makes_the_kv_figures_unknown(cr13_artifact: Path) -> None:
    raw = json.loads((cr13_artifact / "rbln_config.json").read_text())
    raw["cache_metas"][0]["layer_type"] = "chunked_attention"
    (cr13_artifact / "rbln_config.json").write_text(json.dumps(raw, indent=2))
    row = _row(cr13_artifact.parent)
    assert row.kv_bytes_per_npu is None  # not 1008 MiB per block: unknown, with the reason
    assert row.kv_note and "chunked_attention" in row.kv_note
    assert any("chunked_attention" in p for p in row.problems)
    artifact = open_artifact(cr13_artifact)
    assert artifact.kv_bytes_per_npu is None
    with pytest.raises(ResizeError, match="chunked_attention"):
        resize_in_place(cr13_artifact, 12)


@pytest.mark.parametrize(
    ("indent", "newline"), [(4, True), (2, False), (2, True), ("\t", True)], ids=["4-space", "optimum", "2+nl", "tab"]
)
def test_a_resize_changes_only_the_count_line(cr13_artifact: Path, indent: int | str, newline: bool) -> None:
    path = cr13_artifact / "rbln_config.json"
    raw = json.loads(path.read_text())
    path.write_text(json.dumps(raw, indent=indent) + ("\n" if newline else ""))
    before = path.read_text()
    resize_in_place(cr13_artifact, 12)
    diff = [
        line
        for line in difflib.unified_diff(before.splitlines(), path.read_text().splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    pad = indent if isinstance(indent, str) else " " * indent
    assert diff == [f'-{pad}"kvcache_num_blocks": 21,', f'+{pad}"kvcache_num_blocks": 12,']
    assert path.read_text().endswith("\n") == newline
