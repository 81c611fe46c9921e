"""A KV cache that does not scale with kvcache_num_blocks (is_auto false) is described as fixed, not as 0-byte blocks."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from kind_fixtures import materialize

from rbln_artifact_studio.core.display.presentation import block_facts, breakdown_caption
from rbln_artifact_studio.core.fleet.artifact import open_artifact

Run = Callable[..., subprocess.CompletedProcess[str]]


def test_real_llava_cache_is_fixed_size(run_cli: Run, tmp_path: Path) -> None:
    llava = materialize("llava", tmp_path / "llava")
    text = run_cli("inspect", llava).stdout
    assert "0 bytes per block" not in text and "1 full-length sequence(s)" not in text
    assert "fixed size, not resizable: 2 MiB" in text and "is_auto false" in text
    data = json.loads(run_cli("inspect", llava, "--json").stdout)
    assert data["kv_bytes_per_block"] is None
    assert data["kv_fixed_bytes"] == 2 << 20 and "is_auto false" in data["kv_fixed_reason"]
    facts = block_facts(open_artifact(llava).config)
    assert "per block" not in facts.meaning and "2 MiB of fixed size" in facts.meaning


def test_one_block_is_singular(cr13_artifact: Path) -> None:
    fit = open_artifact(cr13_artifact).breakdown(num_blocks=1)
    assert fit is not None and breakdown_caption(fit).startswith("1 block, ")
