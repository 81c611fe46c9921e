"""A write's confirmation states what the place holds after the write, read again through its Kind: a resize whose
artifact another writer changed before the command ended says so and fails, rather than print what it meant."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import paused_cli


def test_an_in_place_resize_confirms_the_count_the_artifact_holds_after_it(cr13_artifact: Path) -> None:
    proc = paused_cli("resize.done", "set-kvcache-num-blocks", cr13_artifact, 12)  # written, not yet confirmed
    try:
        config = cr13_artifact / "rbln_config.json"
        raw = json.loads(config.read_text())
        assert raw["kvcache_num_blocks"] == 12
        raw["kvcache_num_blocks"] = 15  # another writer (an editor, a script) changes it meanwhile
        config.write_text(json.dumps(raw))
    finally:
        out, err = proc.communicate("", timeout=60)
    assert proc.returncode == 1, (out, err)
    assert "Set kvcache_num_blocks to 12" not in out
    assert f"{cr13_artifact} holds kvcache_num_blocks=15 after the write, not the 12 it wrote" in err
