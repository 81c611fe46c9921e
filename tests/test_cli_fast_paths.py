"""CLI fast paths: `get-kvcache-num-blocks DIR` skips the parser, the reader and the location model, with the same
output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import rbln_artifact_studio.cli.main
from rbln_artifact_studio.cli.main import main

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "app"


def outcome(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("case", ["valid", "missing", "legacy", "no count"])
def test_plain_get_matches_the_parsed_command(
    case: str, cr13_artifact: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = {"valid": cr13_artifact, "missing": tmp_path / "nowhere"}.get(case, tmp_path / case)
    if case == "legacy":
        folder.mkdir()
        (folder / "rbln_config.json").write_text('{"_meta": {"version": "0.1"}}')
    elif case == "no count":
        folder.mkdir()
        (folder / "rbln_config.json").write_text('{"kvcache_num_blocks": "21"}')
    parsed = outcome(["get-kvcache-num-blocks", "--", str(folder)], capsys)  # "--" takes the argparse path

    def no_parser() -> None:
        raise AssertionError("the plain get command built the full parser")

    monkeypatch.setattr(rbln_artifact_studio.cli.main, "build_parser", no_parser)
    assert outcome(["get-kvcache-num-blocks", str(folder)], capsys) == parsed
    assert parsed[0] == (0 if case == "valid" else 1)
    assert parsed[1] == ("21\n" if case == "valid" else "")


# What one number does not need: the reader's pydantic, the parser, dataclasses, pathlib, and the location model
# (is_local is core/schemes.py's) with its dispatch (docs/performance.md row 1). typing is allowed.
NOT_FOR_ONE_NUMBER = (
    "pydantic",
    "humanfriendly",
    "rbln_artifact_studio.core.model.rbln_config",
    "argparse",
    "dataclasses",
    "pathlib",
    "rbln_artifact_studio.core.location",
    "rbln_artifact_studio.core.shown",  # error wording: loaded only for an error
    "rbln_artifact_studio.core.numbers",
    "rbln_artifact_studio.places",
    "rbln_artifact_studio.backends",
    "rbln_artifact_studio.cli.parser",  # the parser, the commands' table and a failure's wording: off the fast path
    "rbln_artifact_studio.cli.commands",
    "rbln_artifact_studio.cli.problems",
)


def test_get_imports_only_what_one_number_needs(cr13_artifact: Path) -> None:
    code = (
        "import sys; from rbln_artifact_studio.cli.main import main; "
        f"main(['get-kvcache-num-blocks', {str(cr13_artifact)!r}]); "
        f"print(sorted(m for m in sys.modules if m.startswith({NOT_FOR_ONE_NUMBER!r})))"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.splitlines() == ["21", "[]"]
