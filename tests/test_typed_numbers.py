"""Every number a user types (--timeout, --window, the timeout variables) is checked once, by core's one parser:
a value that is not a finite number of seconds above 0 is one clear line and the usage exit, never a traceback nor
a limit of -5 s."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

import pytest

from rbln_artifact_studio.core.numbers import BadNumber, positive_seconds

Run = Callable[..., subprocess.CompletedProcess[str]]
ODD = ["inf", "1e309", "-5", "nan", "0", "-inf", "ten"]
NOWHERE = "http://127.0.0.1:9"  # nothing listens: a value let through would be a refused connection (exit 1)


def _one_usage_line(done: subprocess.CompletedProcess[str], value: str) -> str:
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and "Error:" not in done.stderr.replace("error:", ""), done.stderr
    [line] = [x for x in done.stderr.splitlines() if "error:" in x]
    assert repr(value) in line and "seconds" in line, line
    return line


@pytest.mark.parametrize("value", ODD)
def test_an_odd_timeout_flag_is_a_usage_error(run_cli: Run, value: str) -> None:
    done = run_cli("devices", "--prometheus", NOWHERE, f"--timeout={value}")
    line = _one_usage_line(done, value)
    assert line.endswith("give e.g. 30."), line
    scan = run_cli("scan", "ssh://npu-x/models", f"--timeout={value}")
    _one_usage_line(scan, value)


@pytest.mark.parametrize(
    ("variable", "command"),
    [
        ("RBLN_STUDIO_SERVER_TIMEOUT", ("devices", "--prometheus", NOWHERE)),
        ("RBLN_STUDIO_SSH_TIMEOUT", ("devices", "ssh://npu-x.invalid")),
        ("RBLN_STUDIO_S3_TIMEOUT", ("scan", "s3://bucket/models")),
    ],
)
@pytest.mark.parametrize("value", ["inf", "1e309", "nan", "-5", "0"])
def test_an_odd_timeout_variable_is_a_usage_error(
    run_cli: Run, variable: str, command: tuple[str, ...], value: str
) -> None:
    env = {variable: value, "AWS_ENDPOINT_URL": NOWHERE, "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"}
    done = run_cli(*command, env=env)
    line = _one_usage_line(done, value)
    assert line.startswith(f"error: {variable}="), line


def test_a_window_beyond_any_deadline_is_said(run_cli: Run) -> None:
    done = run_cli("devices", "--prometheus", NOWHERE, "--window", "9" * 400 + "y")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "is more than ten years; give a duration such as 1h." in done.stderr


def test_one_parser_takes_what_is_finite_and_positive() -> None:
    assert positive_seconds(" 2.5 ", "--timeout ") == 2.5
    assert positive_seconds("1e-3", "") == 0.001
    for odd in [*ODD, "", "1e9", str(10**400)]:
        with pytest.raises(BadNumber):
            positive_seconds(odd, "")
