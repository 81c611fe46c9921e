"""One exit-code rule: a config that fails validation is an invalid artifact (exit 3) for inspect, serving and scan."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

Run = Callable[..., subprocess.CompletedProcess[str]]


def _count(value: str) -> Callable[[bytes], bytes]:
    return lambda data: data.replace(b'"kvcache_num_blocks": 21', b'"kvcache_num_blocks": ' + value.encode(), 1)


DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "2**70": _count(str(2**70)),
    "NaN": _count("NaN"),
    "1e308": _count("1e308"),
    "string": _count('"21"'),
    "bom": lambda data: b"\xef\xbb\xbf" + data,
    "truncated": lambda data: data[: len(data) // 2],
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_inspect_serving_and_scan_agree_on_exit_3(run_cli: Run, cr13_artifact: Path, damage: str) -> None:
    config = cr13_artifact / "rbln_config.json"
    changed = DAMAGE[damage](config.read_bytes())
    assert changed != config.read_bytes()
    config.write_bytes(changed)
    for command in ("inspect", "serving"):
        done = run_cli(command, cr13_artifact)
        assert done.returncode == 3 and done.stderr.startswith("error: "), (command, done)
        assert "Traceback" not in done.stderr
    scanned = run_cli("scan", cr13_artifact.parent, "--json", "--no-cache")
    assert scanned.returncode == 3 and [r["status"] for r in json.loads(scanned.stdout)] == ["invalid"]


def test_a_folder_without_a_config_is_no_artifact(run_cli: Run, tmp_path: Path) -> None:
    done = run_cli("inspect", tmp_path)
    assert done.returncode == 1 and "not a compiled artifact" in done.stderr


@pytest.mark.parametrize("count", [-3, 2**63])
def test_get_prints_what_the_file_records_and_warns(run_cli: Run, cr13_artifact: Path, count: int) -> None:
    config = cr13_artifact / "rbln_config.json"
    config.write_bytes(_count(str(count))(config.read_bytes()))
    done = run_cli("get-kvcache-num-blocks", cr13_artifact)
    assert (done.returncode, done.stdout) == (0, f"{count}\n")  # optimum-rbln-cli's behaviour
    assert done.stderr.startswith("warning: ") and "not valid" in done.stderr
