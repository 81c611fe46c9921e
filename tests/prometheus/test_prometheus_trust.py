"""No secret and no control character from outside reaches a terminal or a log: a two-line credentials file, a
password in a URL under -v, and CR/ESC/newline in Prometheus' labels (a crafted answer: prometheus/crafted.py; the
URL password against the real Prometheus behind basic auth)."""

from __future__ import annotations

import json
import logging
import subprocess
from collections.abc import Callable
from pathlib import Path

from prometheus.crafted import crafted_prometheus, npu
from prometheus.promserver import PASSWORD, USER, Prometheus

Run = Callable[..., subprocess.CompletedProcess[str]]
TOKEN = "tok-3f9a1c77e2b4"
SECOND = "second-line-8d21"
HOSTILE = "node-evil\rnode-bad: 1 NPU(s) fine\x1b[2K"  # printed raw, the CR draws this over the real row


def _no_secret(done: subprocess.CompletedProcess[str], *secrets: str) -> None:
    for secret in secrets:
        assert secret not in done.stdout and secret not in done.stderr, (done.stdout, done.stderr)


def test_a_two_line_credentials_file_never_shows(run_cli: Run, cr13_artifact: Path, tmp_path: Path) -> None:
    (tmp_path / "token").write_text(f"{TOKEN}\n{SECOND}\n")
    config = tmp_path / "http.yml"
    config.write_text("authorization:\n  credentials_file: token\n")
    with crafted_prometheus() as prom:
        prom.series = npu("node-1", "rbln0", 0)
        flags = ("--prometheus", prom.url, "--prometheus-http-config", config)
        for done in (
            run_cli("-v", "devices", *flags),
            run_cli("-v", "devices", *flags, "--json"),
            run_cli("-v", "place", cr13_artifact, *flags),
            run_cli("-v", "place", cr13_artifact, *flags, "--prometheus", prom.url, "--json"),
        ):
            _no_secret(done, TOKEN, SECOND)
            assert done.returncode == 1
            assert f"credentials_file {tmp_path / 'token'} holds 2 lines; a credential is one line" in done.stderr
        assert prom.authorizations == []  # nothing was sent with half a token


def test_a_url_password_never_shows_under_verbose(run_cli: Run, guarded: Prometheus) -> None:
    address = guarded.url.removeprefix("http://")
    done = run_cli("-v", "devices", "--prometheus", f"http://{USER}:{PASSWORD}@{address}", "--json", "--timeout", "20")
    assert done.returncode == 0, done.stderr
    assert [r["host"] for r in json.loads(done.stdout)] == ["legacy-1"]
    assert "devices --prometheus" in done.stderr  # -v echoes the command line, without the password
    _no_secret(done, PASSWORD)
    wrong = run_cli("-v", "devices", "--prometheus", f"http://{USER}:wrong-pass-77@{address}", "--timeout", "20")
    assert wrong.returncode == 1 and "refused the credentials given" in wrong.stderr
    _no_secret(wrong, "wrong-pass-77")


def test_the_log_file_redacts_what_a_record_carries(log_folder: Path) -> None:
    from rbln_artifact_studio.core import logs
    from rbln_artifact_studio.core.shown import register_secret

    register_secret(TOKEN)
    path = logs.setup(to_file=True)
    assert path is not None
    log = logging.getLogger("rbln_artifact_studio.test")
    log.info("asked http://bob:hunter2-pw@prom:9090/api with Authorization: Bearer %s", TOKEN)
    logs.stop()
    text = path.read_text()
    assert "asked http://bob:<redacted>@prom:9090/api" in text
    assert TOKEN not in text and "hunter2-pw" not in text


def test_control_characters_in_labels_are_escaped(run_cli: Run, cr13_artifact: Path) -> None:
    with crafted_prometheus() as prom:
        prom.series = [
            *npu("node-bad", "rbln0", 150_000_000_000, total=1_000),  # used above total: a FAILED row
            *npu(HOSTILE, "rbln0", 0, pod="llm\nnode-x: 4 NPU(s) fine", container="c\x1b]0;title\x07"),
        ]
        shown = run_cli("devices", "--prometheus", prom.url)
        placed = run_cli("place", cr13_artifact, "--prometheus", prom.url)
    for done in (shown, placed):
        assert not any(ch in done.stdout + done.stderr for ch in "\r\x1b\x07"), repr(done.stdout)
        assert "'node-evil'$'\\r''node-bad: 1 NPU(s) fine'$'\\033''[2K'" in done.stdout
    lines = shown.stdout.splitlines()
    assert lines[0].startswith("node-bad: FAILED: ")
    assert [line for line in lines[1:] if not line.startswith(" ")] == [
        "'node-evil'$'\\r''node-bad: 1 NPU(s) fine'$'\\033''[2K': 1 NPU(s) "
        f"(rbln-metrics-exporter via {prom.url}, bytes)"
    ]  # no row faked by the pod's newline
    assert "pod llm\\nnode-x: 4 NPU(s) fine (c\\033]0;title\\a)" in shown.stdout
    assert "  x  node-bad: " in placed.stdout


def test_a_redirect_names_where_it_points(run_cli: Run) -> None:
    with crafted_prometheus() as prom:
        prom.redirect = "https://login.example.com/oauth?next=/api/v1/query"
        done = run_cli("devices", "--prometheus", prom.url)
    assert done.returncode == 1
    assert done.stderr == (
        f"error: Prometheus at {prom.url} answered 302 Found, a redirect to "
        "https://login.example.com/oauth?next=/api/v1/query. Give the URL it redirects to with --prometheus (the "
        "studio does not follow redirects, so credentials never go where a redirect points).\n"
    )


def test_the_fleet_consoles_cells_show_control_characters_escaped() -> None:
    from rbln_artifact_studio.core.display.fleet_console import Column, Npu, node_row, npu_row

    row = npu_row("http://prom:9090", HOSTILE, Npu(0, "rbln0\n", "RBLN-CR13", 0, 1 << 30, holders=("team/llm\rfake",)))
    cells = dict(zip(Column, row.texts, strict=True))
    assert cells[Column.NODE] == "node-evil\\rnode-bad: 1 NPU(s) fine\\033[2K"
    assert (cells[Column.NPU], cells[Column.HOLDERS]) == ("rbln0\\n", "team/llm\\rfake")
    failed = dict(zip(Column, node_row("fleet", "node\x1b[2J", f"refused Bearer {TOKEN}\r").texts, strict=True))
    assert (failed[Column.NODE], failed[Column.HOLDERS]) == ("node\\033[2J", "refused Bearer <redacted>\\r")
