"""A new kind of place is one module plus its registration: folders served over HTTP (tests/places/http_place.py),
registered as a third party would (an entry point), are scanned and inspected by the CLI and shown in the desktop's
table with no other change, their numbers those of the same artifacts read here; a write is refused with the reason
the kind's capabilities give."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import cli_env
from gui import conftest as gui_fixtures
from pytestqt.qtbot import QtBot

from places.http_server import serving
from rbln_artifact_studio.core import location
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.columns import TITLES
from rbln_artifact_studio.core.location import UrlFolder, parse_location
from rbln_artifact_studio.gui.window.main_window import MainWindow
from rbln_artifact_studio.places import dispatch

HERE = Path(__file__).parent
settings, window = gui_fixtures.settings, gui_fixtures.window
pytestmark = pytest.mark.qt_log_ignore(gui_fixtures.OFFSCREEN_NOTICE)


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The kind's module installed as a third party's package would be: on the path, with its entry point."""
    site = tmp_path / "site"
    dist = site / "rbln_studio_http_place-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: rbln-studio-http-place\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[{location.ENTRY_POINT_GROUP}]\nhttp = http_place\n")
    shutil.copy(HERE / "http_place.py", site / "http_place.py")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(location, "_SCHEMES", {})  # this test's registrations end with it
    return site


@pytest.fixture
def fleet(tmp_path: Path, cr13_artifact: Path, ca25_artifact: Path) -> Path:
    """A folder of two artifacts (21 and 14 blocks), one level down as a fleet's are."""
    root = tmp_path / "served" / "fleet"
    root.mkdir(parents=True)
    for artifact in (cr13_artifact, ca25_artifact):
        shutil.move(artifact, root / artifact.name)
    return root


@pytest.fixture
def served(fleet: Path) -> Iterator[str]:
    with serving(fleet.parent) as host:
        yield f"http://{host}/fleet"


def _digests(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()
    }


def _without_place(row: dict[str, object]) -> dict[str, object]:
    """A row's figures and verdict, without where it was read from."""
    return {k: v for k, v in row.items() if k not in ("path", "link_target", "modified")}


def test_the_cli_scans_inspects_and_gets_through_the_registered_kind(
    plugin: Path, fleet: Path, served: str, run_cli
) -> None:
    env = {"PYTHONPATH": f"{plugin}{os.pathsep}{cli_env()['PYTHONPATH']}"}
    there = run_cli("scan", served, "--json", "--no-cache", env=env)
    here = run_cli("scan", fleet, "--json", "--no-cache")
    assert there.returncode == 0, there.stderr
    rows = json.loads(there.stdout)
    assert [r["path"] for r in rows] == [f"{served}/qwen3-8b-ca25x4", f"{served}/qwen3-8b-cr13"]
    assert [_without_place(r) for r in rows] == [_without_place(r) for r in json.loads(here.stdout)]
    assert {r["kvcache_num_blocks"] for r in rows} == {21, 14} and {r["status"] for r in rows} == {"ok"}

    inspected = run_cli("inspect", f"{served}/qwen3-8b-cr13", "--json", env=env)
    local = run_cli("inspect", fleet / "qwen3-8b-cr13", "--json")
    assert inspected.returncode == 0, inspected.stderr
    ours, theirs = json.loads(inspected.stdout), json.loads(local.stdout)
    assert ours["path"] == f"{served}/qwen3-8b-cr13"
    assert {k: v for k, v in ours.items() if k != "path"} == {k: v for k, v in theirs.items() if k != "path"}

    got = run_cli("get-kvcache-num-blocks", f"{served}/qwen3-8b-ca25x4", env=env)
    assert (got.returncode, got.stdout.strip()) == (0, "14")


def test_a_write_is_refused_with_the_reason_of_its_capabilities(
    plugin: Path, fleet: Path, served: str, run_cli, tmp_path: Path
) -> None:
    env = {"PYTHONPATH": f"{plugin}{os.pathsep}{cli_env()['PYTHONPATH']}"}
    before = _digests(fleet)
    in_place = run_cli("set-kvcache-num-blocks", f"{served}/qwen3-8b-cr13", 12, env=env)
    assert in_place.returncode != 0
    assert "a folder served over HTTP" in in_place.stderr and "takes no writes" in in_place.stderr
    assert "Traceback" not in in_place.stderr
    copy = run_cli("set-kvcache-num-blocks", f"{served}/qwen3-8b-cr13", 12, "--output-dir", tmp_path / "c", env=env)
    assert copy.returncode != 0 and "takes no writes" in copy.stderr
    assert not (tmp_path / "c").exists()
    compiled = run_cli("compile", "--model-id", "Qwen/Qwen3-8B", "-o", f"{served}/new", "--npu", "RBLN-CR13", env=env)
    assert compiled.returncode != 0 and "takes no writes" in compiled.stderr
    assert _digests(fleet) == before


def test_an_unregistered_scheme_is_named_not_taken_for_a_folder(tmp_path: Path, run_cli) -> None:
    with pytest.raises(StudioError, match="no kind of place here reads gopher:// URLs"):
        parse_location("gopher://example/fleet")
    done = run_cli("scan", "gopher://example/fleet")
    assert done.returncode != 0 and "gopher://" in done.stderr and "Traceback" not in done.stderr


def test_the_desktop_table_shows_it_beside_the_folders(
    qtbot: QtBot, plugin: Path, window: MainWindow, served: str
) -> None:
    from rbln_artifact_studio.gui.models.place_scan import open_place

    where = parse_location(served)
    assert isinstance(where, UrlFolder) and dispatch.capabilities(where).writable is False
    job = open_place(window.jobs, window.model, where)
    with qtbot.waitSignal(job.finished, timeout=30_000):
        pass
    host = TITLES.index("Host")
    for name, blocks in (("qwen3-8b-cr13", 21), ("qwen3-8b-ca25x4", 14)):
        row = window.model.row_of(f"{served}/{name}")
        assert row is not None
        summary = window.model.summary(row)
        assert (summary.status.value, summary.kvcache_num_blocks) == ("ok", blocks)
        assert window.model.index(row, host).data() == f"http://{where.host}"
    refusal = dispatch.copy_refusal(parse_location(f"{served}/qwen3-8b-cr13"), parse_location("/tmp/copy"))
    assert refusal is not None and "takes no writes" in refusal


def test_every_model_kind_reads_there_as_it_reads_here(plugin: Path, tmp_path: Path, run_cli) -> None:
    """VLMs, pipelines and encoders too: their checks read around the folder, through the same access."""
    from kind_fixtures import EXPECTED_KINDS, materialize, simulated_llava

    root = tmp_path / "kinds"
    root.mkdir()
    for name in EXPECTED_KINDS:
        materialize(name, root / name)
    simulated_llava(root / "llava-sim")
    env = {"PYTHONPATH": f"{plugin}{os.pathsep}{cli_env()['PYTHONPATH']}"}
    here = run_cli("scan", root, "--json", "--no-cache")
    with serving(tmp_path) as host:
        there = run_cli("scan", f"http://{host}/kinds", "--json", "--no-cache", env=env)
    assert there.returncode == here.returncode, there.stderr
    rows, local = json.loads(there.stdout), json.loads(here.stdout)
    assert len(rows) == len(EXPECTED_KINDS) + 1

    def comparable(row: dict[str, object]) -> dict[str, object]:
        same = _without_place(row)
        same["problems"] = [str(p).replace(str(root), "ROOT") for p in row["problems"]]  # type: ignore[attr-defined]
        return same

    there_rows = [
        comparable({**r, "problems": [p.replace(f"http://{host}/kinds", str(root)) for p in r["problems"]]})
        for r in rows
    ]
    assert there_rows == [comparable(r) for r in local]
