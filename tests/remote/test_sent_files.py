"""A server's artifact checked from what its scan sent, in memory, gives what the same answer laid out in files gives.

The server's scan program runs here on a real-looking fleet (links, hard links, damaged graphs, other kinds);
each artifact it reports is checked both ways and must come out the same, as a table row and as a breakdown.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from fakes.install import build_toolchain
from fleet.layouts import build_fleet
from kind_fixtures import materialize, simulated_llava

from rbln_artifact_studio.backends import rebel_probe
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.artifact import open_artifact
from rbln_artifact_studio.core.fleet.scan import ArtifactSummary
from rbln_artifact_studio.core.fleet.verify import described_row, with_verdict
from rbln_artifact_studio.core.location import ServerFolder
from rbln_artifact_studio.core.model.kinds import NoKvCacheError
from rbln_artifact_studio.core.simulator.container import PREAMBLE_SIZE
from rbln_artifact_studio.core.status import Status
from rbln_artifact_studio.remote import artifact as remote_artifact
from rbln_artifact_studio.remote import server as remote_server
from rbln_artifact_studio.remote.records import RecordReader
from rbln_artifact_studio.remote.scan import RULES
from rbln_artifact_studio.remote.scan_rows import RowMaker, pieces_of

HOST = "npu-7"


def answer_of(program: str, args: list[str], tmp_path: Path, env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """What one of the server's programs sends, run here as a server runs it (assembled, in a python3 that sees
    only its standard library: -I -S), as the studio parses it."""
    answer = tmp_path / "answer"
    sent = tmp_path / f"{program}.py"
    sent.write_text(remote_server.assembled_program(program))
    with open(answer, "wb") as out:
        subprocess.run([sys.executable, "-I", "-S", str(sent), *args], stdout=out, check=True, env=env)
    fd = os.open(answer, os.O_RDONLY)
    try:
        reader = RecordReader(fd)
        records = []
        while (record := reader.next(5)) is not None:
            records.append(record)
    finally:
        os.close(fd)
    assert reader.ended
    return records


Sent = tuple[str, list[list[Any]], dict[str, Any], dict[str, Any] | None]
"""An artifact's folder on the server, its files, the pieces sent of them, and rebel's answer."""


def sent_artifacts(root: Path, tmp_path: Path, toolchain: Path) -> list[Sent]:
    """Every artifact under root as the server sends it: with the scan, or, where rebel reads its graphs, by the
    snapshot program (the second round trip)."""
    keeper = RowMaker(HOST)  # a copy's record names the blob of the first: each gets its blob, as the scan does
    records = [keeper.kept(r) for r in answer_of("scan", [str(root), RULES], tmp_path)]
    assert records[-1].get("end") is not None
    sent: list[Sent] = [(r["a"], r["fl"], pieces_of(r), None) for r in records if "fl" in r and not r.get("real")]
    real = [r["a"] for r in records if r.get("real")]
    probe = Path(rebel_probe.__file__).read_text()
    env = dict(os.environ, PATH=f"{toolchain}{os.pathsep}{os.environ['PATH']}")
    snapshots = answer_of("snapshot", [remote_artifact.RULES, probe, *real], tmp_path, env)
    assert len(snapshots) == len(real) >= 5
    for folder, r in zip(real, snapshots, strict=True):
        sent.append((folder, r["files"], remote_artifact.snapshot_pieces(r), r.get("rebel")))
    return sent


def seen(sent: Sent, check: Any) -> tuple[ArtifactSummary, object]:
    """The table row and the breakdown one way of checking gives (or the error's words)."""
    folder, files, pieces, rebel = sent
    target = ServerFolder(HOST, folder)
    found = ArtifactSummary(target.url, target.name, Status.CHECKING)
    try:
        artifact = check(HOST, target, files, pieces, rebel)
    except NoKvCacheError as exc:
        return described_row(found, exc.description), None
    except StudioError as exc:
        return with_verdict(found, exc), exc.message
    paths = [str(p) for g in artifact.graph_files for p in (g.path, g.container and g.container.path) if p]
    return with_verdict(found, artifact), (artifact.breakdown(), artifact.other_files, str(artifact.model_dir), paths)


@pytest.fixture
def fleet_root(tmp_path: Path) -> Path:
    """The real-fleet layouts, other kinds, and damage a copy meets: a header slot overwritten, a graph missing."""
    fleet = build_fleet(tmp_path / "base")
    kinds = fleet.root / "kinds"
    for name in ("qwen3", "whisper", "bert", "stable_diffusion"):
        materialize(name, kinds / name)
    simulated_llava(kinds / "llava")
    slot = fleet.root / "slot-damaged"
    shutil.copytree(fleet.art, slot)
    graph = sorted(slot.glob("*.rbln"))[0]
    with open(graph, "r+b") as f:
        f.seek(PREAMBLE_SIZE + 24)
        f.write(b"\xff" * 64)  # the newest header slot's body: the check falls back to the other slot, or says why
    missing = fleet.root / "graph-missing"
    shutil.copytree(fleet.art, missing)
    sorted(missing.glob("*.rbln"))[-1].unlink()
    extra = fleet.root / "with-tokenizer"
    shutil.copytree(fleet.art, extra)
    (extra / "tokenizer.json").write_text(json.dumps({"vocab": list(range(1000))}))
    return fleet.root


def test_every_artifact_reads_from_memory_as_the_local_reader_reads_its_folder(
    fleet_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    toolchain = build_toolchain(tmp_path / "toolchain")
    sent = sent_artifacts(fleet_root, tmp_path, toolchain.path_dir)

    def no_copy(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a server's artifact was copied into a temporary folder to be read")

    # Every layout (a VLM's language_model/ part, a pipeline's components, models without a KV cache) is read
    # where the server's answer holds it: nothing is laid out in a private folder and renamed back.
    monkeypatch.setattr(tempfile, "TemporaryDirectory", no_copy)
    monkeypatch.setattr(tempfile, "mkdtemp", no_copy)
    rows = {}
    for artifact in sent:
        in_memory = seen(artifact, remote_artifact.check_snapshot)
        rows[os.path.basename(artifact[0])] = in_memory[0]
        if artifact[3] is None:  # as this machine's reader sees the folder itself (the "server" is this machine)
            assert in_memory == local_seen(artifact[0]), artifact[0]
    assert len(rows) == len(sent) >= 18
    assert {name for name, row in rows.items() if row.status is Status.INVALID} >= {
        "graph-missing",
        "truncated",
        "zero-byte",
        "overwritten",
        "hand-edit",
    }
    assert rows["with-tokenizer"].status is Status.OK and rows["art"].status is Status.OK
    assert rows["qwen3"].kind == "decoder-only" and rows["whisper"].kind == "encoder-decoder"
    assert rows["llava"].kind == "multimodal" and rows["llava"].status is Status.OK
    assert rows["stable_diffusion"].kind == "diffusers pipeline"


def local_seen(folder: str) -> tuple[ArtifactSummary, object]:
    """What `seen` gives for folder read by the local reader, its paths worded as a server scan words them."""
    url = ServerFolder(HOST, folder).url
    found = ArtifactSummary(url, os.path.basename(folder), Status.CHECKING)
    detail: object
    try:
        artifact = open_artifact(Path(folder))
    except NoKvCacheError as exc:
        row, detail = described_row(found, exc.description), None
    except StudioError as exc:
        row, detail = with_verdict(found, exc), exc.message.replace(folder, url)
    else:
        paths = [str(p) for g in artifact.graph_files for p in (g.path, g.container and g.container.path) if p]
        row = with_verdict(found, artifact)
        detail = (artifact.breakdown(), artifact.other_files, str(artifact.model_dir), paths)
    return dataclasses.replace(row, problems=[p.replace(folder, url) for p in row.problems]), detail


def test_a_part_s_empty_config_is_sent_empty_not_left_out(tmp_path: Path, ca25_artifact: Path) -> None:
    """A text the check reads is sent whole even when empty: the check then says it is not valid JSON, not that
    the file does not exist."""
    (ca25_artifact / "config.json").write_bytes(b"")
    part = ca25_artifact / "language_model"
    part.mkdir()
    (part / "rbln_config.json").write_bytes(b"\0" * 16)
    [record] = [r for r in answer_of("scan", [str(ca25_artifact.parent), RULES], tmp_path) if "a" in r]
    pieces = pieces_of(record)
    assert pieces["config.json"] == [(0, b"")]
    assert pieces["language_model/rbln_config.json"] == [(0, b"\0" * 16)]


def test_a_file_read_from_memory_is_its_pieces_and_zeros_to_its_size(tmp_path: Path) -> None:
    root = Path("/srv/a")
    sent = remote_artifact.SentFiles(
        root, [["g.rbln", 10], ["rbln_config.json", 4]], {"g.rbln": [(2, b"ab"), (8, b"xyz")]}
    )
    read = sent.read_at("g.rbln")
    assert read(100, 0) == b"\0\0ab\0\0\0\0xy"  # a piece past the file's end is cut at its size, as a file reads
    assert read(3, 3) == b"b\0\0" and read(5, 10) == b"" and read(4, 20) == b""
    assert sent.whole("rbln_config.json") is None  # listed, not sent
    graphs, others = sent.listing(root)
    assert [(n, str(p), s) for n, p, s in graphs] == [("g", "/srv/a/g.rbln", 10)]
    assert others == [("rbln_config.json", 4)]


@pytest.mark.parametrize("name", ["../etc/passwd", "/etc/passwd", "a/../../b", ".", "a/b/c"])
def test_a_name_that_is_not_an_artifacts_file_is_refused(name: str) -> None:
    root = Path("/srv/a")
    with pytest.raises(StudioError, match="not a file of an artifact"):
        remote_artifact.SentFiles(root, [[name, 1]], {})
