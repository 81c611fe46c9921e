"""Copies of a model on a server are sent and checked once, and every copy's row is still the one the local scan gives.

The server names a blob it sent before instead of sending the same bytes again (on_server/scan.py's "keep" and
"same"); the studio checks an artifact whose files and bytes match one already checked once (remote/scan_rows.py).
The server program runs here through the local transport: the rows must equal the local scan's, paths as URLs.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest

from rbln_artifact_studio.core.fleet.scan import ArtifactSummary, scan
from rbln_artifact_studio.core.location import ServerFolder
from rbln_artifact_studio.remote import scan as remote_scan
from rbln_artifact_studio.remote.local import LocalTransport
from rbln_artifact_studio.remote.scan_rows import RowMaker
from rbln_artifact_studio.remote.server import Server

HOST = "npu-7"


def as_remote(root: Path, rows: list[ArtifactSummary]) -> list[ArtifactSummary]:
    """Local rows as a server scan words them: each path, in messages too, as the server's URL."""
    there = f"ssh://{HOST}{root}"
    return [
        dataclasses.replace(
            r, path=r.path.replace(str(root), there), problems=[p.replace(str(root), there) for p in r.problems]
        )
        for r in rows
    ]


def scanned_remotely(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[ArtifactSummary], list[str], list[dict[str, Any]]]:
    """The server scan's rows, the folders the studio checked itself (not shared), and the records as sent."""
    checked: list[str] = []
    sent: list[dict[str, Any]] = []
    check, kept = RowMaker._check, RowMaker.kept

    def counted(self: RowMaker, record: dict[str, Any]) -> ArtifactSummary:
        checked.append(record["a"])
        return check(self, record)

    def seen(self: RowMaker, record: dict[str, Any]) -> dict[str, Any]:
        sent.append({k: v for k, v in record.items() if k != "blob_data"})
        return kept(self, record)

    monkeypatch.setattr(RowMaker, "_check", counted)
    monkeypatch.setattr(RowMaker, "kept", seen)
    server = Server(LocalTransport(HOST), python=sys.executable)
    rows = list(remote_scan.scan_remote(server, ServerFolder(HOST, str(root))))
    return rows, checked, sent


def copy(template: Path, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copytree(template, dest))


def test_copies_are_checked_once_and_every_row_is_the_local_one(
    ca25_artifact: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "fleet"
    for where in ("a/qwen", "b/qwen", "c/qwen-again"):
        copy(ca25_artifact, root / where)
    copy(ca25_artifact, root / "language_model")  # a name the reader treats apart (a VLM's part): its own check
    copy(ca25_artifact, root / "d" / "text_model")
    extra = copy(ca25_artifact, root / "e" / "with-tokenizer")  # another file: not the same artifact
    (extra / "tokenizer.json").write_text("{}")
    for where in ("f/mismatch-1", "g/mismatch-2"):  # the same damage, worded without a path: shared
        config = copy(ca25_artifact, root / where) / "rbln_config.json"
        raw = json.loads(config.read_text())
        raw["kvcache_num_blocks"] += 1
        config.write_text(json.dumps(raw, indent=2))
    for where in ("h/broken-1", "i/broken-2"):  # the same bytes, a verdict that names the folder: each its own
        (copy(ca25_artifact, root / where) / "rbln_config.json").write_text("{not json")
    local = list(scan(root, use_cache=False))
    rows, checked, sent = scanned_remotely(root, monkeypatch)
    assert rows == as_remote(root, local)
    assert {r.name: r.status.value for r in rows}["mismatch-2"] == "invalid"
    assert any(str(root / "i" / "broken-2") in p for r in rows for p in r.problems)
    # Bytes sent once each: the plain copies, the tokenizer's (not a piece the check reads) and the damaged ones'.
    assert [r.get("same") is not None for r in sent if r.get("a")].count(True) == 7
    named = {Path(folder).relative_to(root).as_posix() for folder in checked}
    assert named == {
        "a/qwen",
        "language_model",
        "d/text_model",
        "e/with-tokenizer",
        "f/mismatch-1",
        "h/broken-1",
        "i/broken-2",
    }


def test_blobs_the_server_forgot_are_sent_again(
    ca25_artifact: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With room for two blobs, the server forgets them (and says so) and sends a model's bytes again when a copy
    comes after others: every row is still the local one."""
    root = tmp_path / "fleet"
    models = {}
    for key, indent in (("a", 2), ("b", 3), ("c", 4), ("d", 5)):  # the same config, other bytes: another blob
        models[key] = copy(ca25_artifact, tmp_path / "models" / key)
        config = models[key] / "rbln_config.json"
        config.write_text(json.dumps(json.loads(config.read_text()), indent=indent))
    for i, key in enumerate("abcaadbb"):
        copy(models[key], root / f"{i:02d}-{key}")
    rules = json.loads(remote_scan.RULES)
    monkeypatch.setattr(remote_scan, "RULES", json.dumps({**rules, "keep": [2, rules["keep"][1]]}))
    local = list(scan(root, use_cache=False))
    rows, checked, sent = scanned_remotely(root, monkeypatch)
    assert rows == as_remote(root, local)
    said = [("keep" in r, "same" in r, "forget" in r) for r in sent if r.get("a")]
    # a, b kept; c: forget, kept; a: kept; a: same; d: forget, kept; b: kept (forget); b: same
    assert said == [
        (True, False, False),
        (True, False, False),
        (True, False, True),
        (True, False, False),
        (False, True, False),
        (True, False, True),
        (True, False, False),
        (False, True, False),
    ]
    assert len(checked) == 6  # each blob sent once checked once; a copy of a forgotten blob is checked again


def test_other_bytes_under_the_same_checksum_are_sent_as_themselves(
    ca25_artifact: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server finds a kept blob by a checksum, and compares the bytes before naming it: two configs that differ
    by +1, -2, +1 in three bytes (the same length and Adler-32; here an NPU the studio does not know) are each
    sent and checked as themselves."""
    root = tmp_path / "fleet"
    known = copy(ca25_artifact, tmp_path / "models" / "a")
    other = copy(ca25_artifact, tmp_path / "models" / "b")
    text = (known / "rbln_config.json").read_bytes()
    (other / "rbln_config.json").write_bytes(text.replace(b"RBLN-CA25", b"RBLN.AB25"))
    assert zlib.adler32((other / "rbln_config.json").read_bytes()) == zlib.adler32(text)
    for i, model in enumerate((known, other, known, other)):
        copy(model, root / f"{i:02d}-{model.name}")
    local = list(scan(root, use_cache=False))
    rows, checked, sent = scanned_remotely(root, monkeypatch)
    assert rows == as_remote(root, local)
    assert rows[1].status.value == "invalid" != rows[0].status.value
    assert [("keep" in r, "same" in r) for r in sent if r.get("a")] == [(True, False)] * 4
    assert len(checked) == 4
