"""rbln-studio's entry point: --version and --help answer without importing Qt."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import cli_env


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys\n"
        "from rbln_artifact_studio.gui.main import main\n"
        "try:\n"
        f"    main({list(args)!r})\n"
        "except SystemExit as exc:\n"
        "    print('exit', exc.code)\n"
        "print('qt loaded:', sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6')))\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env(), check=True)


def test_version_needs_no_qt() -> None:
    out = _run("--version").stdout
    assert out.splitlines()[0].startswith("rbln-studio ")
    assert "exit 0" in out and "qt loaded: []" in out


def test_help_lists_the_folder_and_demo() -> None:
    out = _run("--help").stdout
    assert "--demo" in out and "folder" in out and "qt loaded: []" in out


def test_the_usual_start_reads_its_arguments_as_the_parser_would() -> None:
    """No option and at most a folder skip building argparse's parser; what comes out is what the parser says,
    and anything else (an option, a second folder) still goes to the parser, its errors included."""
    from rbln_artifact_studio.gui.main import build_parser, parse_arguments

    for argv in ([], ["/data/artifacts"], ["s3://bucket/prefix"], [""]):
        assert parse_arguments(argv) == build_parser().parse_args(argv)
    assert parse_arguments(["--theme", "dark", "F"]) == build_parser().parse_args(["--theme", "dark", "F"])
    with pytest.raises(SystemExit):
        parse_arguments(["one", "two"])
