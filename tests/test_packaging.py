"""Packaging: the wheel carries resources and both programs; desktop metadata is consistent; the bundle runs."""

from __future__ import annotations

import configparser
import os
import subprocess
import sys
import sysconfig
import venv
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest
from conftest import REPO

APP_ID = "io.github.rbln_artifact_studio.RblnStudio"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(REPO)],
        check=True,
        capture_output=True,
    )
    (found,) = out.glob("rbln_artifact_studio-*.whl")
    return found


def test_wheel_contains_presets_icons_and_both_scripts(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        entry_points = zf.read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "rbln_artifact_studio/resources/model-configs/Qwen--Qwen3-8B.json" in names
    assert "rbln_artifact_studio/resources/icons/rbln-studio.svg" in names
    icons = {f"rbln_artifact_studio/resources/icons/rbln-studio-{s}.png" for s in (16, 32, 48, 64, 128, 256, 512)}
    assert icons <= names
    programs = {"prelude", "bundle", "scan", "snapshot", "launch", "job", "jobs"}  # sent to NPU servers as source text
    assert {f"rbln_artifact_studio/remote/on_server/{p}.py" for p in programs} <= names
    portable = {"__init__", "walk", "files", "lock", "exchange"}  # ... with these, read as text too
    assert {f"rbln_artifact_studio/core/portable/{p}.py" for p in portable} <= names
    assert "rbln-studio-cli = rbln_artifact_studio.cli.main:main" in entry_points
    assert "rbln-studio = rbln_artifact_studio.gui.main:main" in entry_points


def test_wheel_installs_one_top_level_package_of_our_own(wheel: Path) -> None:
    # A top-level "app" (or any generic name) in site-packages would collide with other projects doing the same.
    with zipfile.ZipFile(wheel) as zf:
        tops = {name.split("/")[0] for name in zf.namelist() if not name.split("/")[0].endswith(".dist-info")}
        core = {n for n in zf.namelist() if n.startswith("rbln_artifact_studio/core/") and n.endswith(".py")}
    assert tops == {"rbln_artifact_studio"}
    assert "rbln_artifact_studio/core/estimation/estimator.py" in core  # subpackages are shipped too


def test_wheel_installs_and_runs_in_a_fresh_venv(wheel: Path, tmp_path: Path) -> None:
    # The running interpreter's site-packages provide the (large) dependencies through a .pth line, so this works
    # in a virtual environment as well as outside one (a venv's system_site_packages would see the base Python's,
    # not the active venv's); the project itself comes only from the wheel, which sits earlier on sys.path.
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    bin_dir = env_dir / "bin"
    own_site = subprocess.run(
        [bin_dir / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(own_site) / "_studio_test_deps.pth").write_text("\n".join(sorted(deps)) + "\n")
    subprocess.run([bin_dir / "python", "-m", "pip", "install", "-q", "--no-deps", str(wheel)], check=True)
    clean_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"QT_QPA_PLATFORM": "offscreen"}
    presets = subprocess.run(
        [bin_dir / "rbln-studio-cli", "presets"], capture_output=True, text=True, env=clean_env, cwd=tmp_path
    )
    assert presets.returncode == 0 and "Qwen/Qwen3-8B" in presets.stdout
    where = subprocess.run(
        [bin_dir / "python", "-c", "import rbln_artifact_studio as app; print(app.__file__)"],
        capture_output=True,
        text=True,
        env=clean_env,
        cwd=tmp_path,
    )
    assert str(env_dir) in where.stdout  # the wheel's copy, not the checkout
    version = subprocess.run([bin_dir / "rbln-studio", "--version"], capture_output=True, text=True, env=clean_env)
    assert version.returncode == 0 and version.stdout.startswith("rbln-studio ")


def test_the_wheel_assembles_every_program_sent_to_servers(wheel: Path, tmp_path: Path) -> None:
    # From the wheel's files alone (unpacked first on the path): each program, with the modules sent along.
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(tmp_path / "unpacked")
    assemble = (
        "import sys; from rbln_artifact_studio.remote import server; print(server.__file__); "
        "print(min(len(server.program_source(p)) for p in ('scan', 'snapshot', 'launch', 'jobs')), "
        "len(server.assembled_program('job')))"
    )
    env = os.environ | {"PYTHONPATH": str(tmp_path / "unpacked")}
    done = subprocess.run([sys.executable, "-c", assemble], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    where, sizes = done.stdout.splitlines()
    assert where.startswith(str(tmp_path / "unpacked")) and all(int(n) > 0 for n in sizes.split())


HELP_DOCUMENTATION = r"""
import re, sys, types
from pathlib import Path
from PySide6.QtWidgets import QApplication
from rbln_artifact_studio.gui.window.help_menu import HelpMenu
from rbln_artifact_studio.gui.window.window_dialogs import DialogLauncher

app = QApplication([])
# Help > Documentation's own code, with no main window: the guide opens in the app's own viewer.
launcher = types.SimpleNamespace(window=None)
launcher.open_guide = lambda page: DialogLauncher.open_guide(launcher, page)
viewer = HelpMenu.open_documentation(types.SimpleNamespace(window=None, dialogs=lambda: launcher))
assert viewer is not None, "Documentation opened nothing"
page = Path(viewer.browser.source().toLocalFile())
print(page)
assert "The desktop app" in viewer.browser.toPlainText(), "the guide's page is empty"
for picture in re.findall(r"\]\((screenshots/[^)]+)\)", page.read_text(encoding="utf-8")):
    assert (page.parent / picture).is_file(), picture
"""


def test_help_documentation_opens_the_guide_shipped_in_the_wheel(wheel: Path, tmp_path: Path) -> None:
    # Installed from the wheel there is no checkout around the package: the guide must come with it.
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(tmp_path / "unpacked")
    env = os.environ | {"PYTHONPATH": str(tmp_path / "unpacked"), "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, "-c", HELP_DOCUMENTATION], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
    )
    assert done.returncode == 0, done.stderr
    page = Path(done.stdout.strip().splitlines()[-1])
    assert page == tmp_path / "unpacked" / "rbln_artifact_studio" / "docs" / "desktop.md"
    assert "# The desktop app" in page.read_text(encoding="utf-8")


def test_desktop_entry_and_appstream_agree() -> None:
    desktop = configparser.ConfigParser(interpolation=None)
    desktop.optionxform = str  # type: ignore[assignment,method-assign]
    desktop.read(REPO / "packaging" / f"{APP_ID}.desktop")
    entry = desktop["Desktop Entry"]
    assert entry["Type"] == "Application" and entry["Exec"].startswith("rbln-studio")
    assert entry["Icon"] == APP_ID and entry["Categories"].endswith(";")
    root = ET.parse(REPO / "packaging" / f"{APP_ID}.metainfo.xml").getroot()
    assert root.findtext("id") == APP_ID
    assert root.findtext("launchable") == f"{APP_ID}.desktop"
    from rbln_artifact_studio import __version__

    assert root.find("releases/release").get("version") == __version__  # type: ignore[union-attr]


@pytest.mark.slow
def test_bundle_builds_and_runs(tmp_path: Path) -> None:
    """About a minute: builds dist/rbln-studio with PyInstaller, runs the CLI, --version and the GUI's smoke test."""
    work = tmp_path / "bundle"
    subprocess.run(
        ["bash", str(REPO / "packaging" / "build_bundle.sh")],
        check=True,
        cwd=REPO,
        env=os.environ | {"BUNDLE_WORK": str(work)},
    )
    dist = REPO / "dist" / "rbln-studio"
    assert (
        dist / "_internal" / "rbln_artifact_studio" / "backends" / "rebel_probe.py"
    ).is_file()  # run by the toolchain's Python
    assert (dist / "_internal" / "rbln_artifact_studio" / "core" / "portable" / "walk.py").is_file()  # sent along
    docs = dist / "_internal" / "rbln_artifact_studio" / "docs"  # Help ▸ Documentation opens desktop.md there
    pictures = {p.name for p in (REPO / "docs" / "screenshots").glob("*.png")}
    assert (docs / "desktop.md").is_file() and {p.name for p in (docs / "screenshots").glob("*.png")} == pictures
    out = subprocess.run(
        [
            dist / "rbln-studio-cli",
            "compile",
            "--model-id",
            "Qwen/Qwen3-8B",
            "-o",
            tmp_path / "a",
            "--npu",
            "RBLN-CR13",
            "--batch_size",
            "8",
            "--kvcache_partition_len",
            "8192",
            "--memory-budget",
            "0.3",
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0 and "kvcache_num_blocks=21" in out.stdout
    version = subprocess.run(
        [dist / "rbln-studio", "--version"],
        capture_output=True,
        text=True,
        env=os.environ | {"QT_QPA_PLATFORM": "offscreen"},
    )
    assert version.stdout.startswith("rbln-studio ")
    # The bundled GUI opens its main window offscreen (Qt plugins, icon and presets all found), then quits.
    smoke = subprocess.run(
        [dist / "rbln-studio", "--smoke-test"],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ
        | {
            "QT_QPA_PLATFORM": "offscreen",
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_DATA_HOME": str(tmp_path / "data"),
        },
    )
    assert smoke.returncode == 0, smoke.stderr
    assert "smoke test: main window shown on offscreen" in smoke.stdout and "model presets loaded" in smoke.stdout
