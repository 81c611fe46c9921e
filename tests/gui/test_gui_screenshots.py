"""The app under a real X server (Xvfb): main window and dialogs in light and dark palettes, at 100% and 200%, and
right to left, and on a 1024x700 screen, with no clipped or overlapping text, every window and its buttons on the
screen; images in build/screenshots/.

Each variant runs tests/gui/screenshot_run.py in its own process (QT_SCALE_FACTOR is read once at start-up) on an
Xvfb screen of 1280x800 logical pixels (2560x1600 at 200%), started here on a free display.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Generator
from pathlib import Path

import pytest
from conftest import REPO, cli_env

XVFB = shutil.which("Xvfb")
OUT = REPO / "build" / "screenshots"
RUNNER = Path(__file__).with_name("screenshot_run.py")
# What Qt's xcb platform plugin needs beyond the X server (Debian/Ubuntu names; tools/system_packages.sh installs them).
XCB_PACKAGES = "libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 libxkbcommon-x11-0 libxcb-cursor0"

pytestmark = pytest.mark.skipif(
    XVFB is None, reason="needs an X server: install the xvfb package (tools/system_packages.sh does as root)"
)


def _xvfb(width: int, height: int) -> Generator[str, None, None]:
    """An Xvfb on a display it picks itself (-displayfd: no clash with another one); yields ':N'."""
    read, write = os.pipe()
    proc = subprocess.Popen(
        [XVFB, "-displayfd", str(write), "-screen", "0", f"{width}x{height}x24", "-nolisten", "tcp"],  # type: ignore[list-item]
        pass_fds=(write,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    try:
        with os.fdopen(read) as pipe:
            number = pipe.readline().strip()
        if not number:
            pytest.fail("Xvfb did not start")
        yield f":{number}"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from conftest import compile_artifact

    root = tmp_path_factory.mktemp("screens")
    compile_artifact(root / "qwen3-8b-cr13", npu="RBLN-CR13", memory_budget=0.3)
    compile_artifact(root / "qwen3-8b-ca25x4", npu="RBLN-CA25", num_devices=4, memory_budget=0.5)
    compile_artifact(root / "qwen3-8b-ca25x4-kv18", npu="RBLN-CA25", num_devices=4, kvcache_num_blocks=18)
    return root


def _run(workspace: Path, display: str, *options: str) -> dict[str, list[str]]:
    env = {**cli_env(), "DISPLAY": display, "QT_QPA_PLATFORM": "xcb"}
    scale = options[options.index("--scale") + 1] if "--scale" in options else "1"
    env["QT_SCALE_FACTOR"] = scale
    env.pop("QT_SCREEN_SCALE_FACTORS", None)
    out = subprocess.run(
        [sys.executable, str(RUNNER), str(workspace), str(OUT), *options],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
    )
    if "could not load the qt platform plugin" in out.stderr.lower():
        pytest.skip(f"Qt's xcb platform plugin cannot load: install {XCB_PACKAGES}")
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    ("options", "screen"),
    [
        (("--theme", "light"), (1280, 800)),
        (("--theme", "dark"), (1280, 800)),
        (("--theme", "light", "--scale", "2"), (2560, 1600)),
        (("--theme", "dark", "--scale", "2"), (2560, 1600)),
        (("--theme", "dark", "--rtl"), (1280, 800)),
        (("--theme", "light"), (1024, 700)),
        (("--theme", "dark"), (1024, 700)),
    ],
    ids=["light-100", "dark-100", "light-200", "dark-200", "dark-rtl", "light-1024x700", "dark-1024x700"],
)
def test_every_window_fits_and_no_text_is_clipped(
    workspace: Path, options: tuple[str, ...], screen: tuple[int, int]
) -> None:
    generator = _xvfb(*screen)
    display = next(generator)
    try:
        result = _run(workspace, display, *options)
    finally:
        generator.close()
    assert result["problems"] == []
    for image in result["images"]:
        path = Path(image)
        assert path.is_file() and path.stat().st_size > 10_000  # a real picture, not an empty grab
