"""The fleet read from a real Prometheus scraping the exporter stand-in: both name families, pods, a node that is
down, series that cannot be true, basic auth, and each failure (unreachable, never answering, not a Prometheus,
a query error, nothing scraped) a message saying what to do, with no credentials in it."""

from __future__ import annotations

import socket
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from prometheus.conftest import CR13, GIB, NODES, Monitoring
from prometheus.crafted import serving
from prometheus.promserver import PASSWORD, USER, Prometheus
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.npu_status import ReadForm
from rbln_artifact_studio.remote.prometheus import (
    PrometheusError,
    load_http_config,
    memory_history,
    read_fleet,
)


def _rows(monitoring: Monitoring, match: str, **options: Any) -> dict[str, Any]:
    fleet = read_fleet(monitoring.url, match=match, timeout=20, **options)
    return {r.host: r for r in fleet.readings}


def test_both_name_families_read_as_the_same_npus(monitoring: Monitoring) -> None:
    fleet = read_fleet(monitoring.url, match='hostname=~"legacy-1|current-1"', timeout=20)
    assert fleet.families == ("current", "legacy")
    legacy, current = (r.status for r in sorted(fleet.readings, key=lambda r: r.host != "legacy-1"))
    assert legacy is not None and current is not None
    for status in (legacy, current):
        assert status.form is ReadForm.PROMETHEUS and status.tool == "rbln-metrics-exporter"
        assert status.source == monitoring.url and status.driver_version == "1.3.73"
        first, second = status.devices
        assert (first.index, first.name, first.device) == (0, "RBLN-CR13", "rbln0")
        assert (first.used, first.total, first.free) == (40 * GIB, CR13, CR13 - 40 * GIB)
        assert (first.util, first.temperature, first.power) == ("55.5", 47.0, 120.5)
        assert (second.index, second.used, second.temperature) == (1, 0, 38.0)
        assert first.uuid == f"{status.host}-rbln0-uuid" and first.firmware_version == "2.1.0"
        assert first.processes == ()  # no pod labels on these nodes


def _queries_answered(prometheus: Prometheus) -> int:
    """Prometheus' own count of instant queries it answered (its /metrics), this test's included."""
    with urllib.request.urlopen(f"{prometheus.url}/metrics", timeout=10) as response:
        text = response.read().decode()
    return sum(
        int(float(line.rsplit(" ", 1)[1]))
        for line in text.splitlines()
        if line.startswith("prometheus_http_requests_total{") and 'handler="/api/v1/query"' in line
    )


def test_the_whole_fleet_in_one_query_two_with_a_window(monitoring: Monitoring) -> None:
    before = _queries_answered(monitoring.prometheus)
    fleet = read_fleet(monitoring.url, timeout=20)
    assert len(fleet.readings) == len(NODES) and _queries_answered(monitoring.prometheus) == before + 1
    read_fleet(monitoring.url, window="5m", timeout=20)
    assert _queries_answered(monitoring.prometheus) == before + 3


def test_a_pod_holding_an_npu_is_shown_like_a_process(monitoring: Monitoring) -> None:
    status = _rows(monitoring, 'hostname="pods-1"')["pods-1"].status
    assert status is not None
    held, idle = status.devices
    [pod] = held.processes
    assert (pod.namespace, pod.pod, pod.container, pod.name, pod.pid, pod.memory) == (
        "team-a",
        "llm-0",
        "vllm",
        "vllm",
        0,
        None,
    )
    assert pod.label() == "pod team-a/llm-0 (vllm)" and idle.processes == ()
    assert status.to_json()["devices"][0]["processes"] == [
        {"pid": 0, "name": "vllm", "memory": None, "namespace": "team-a", "pod": "llm-0", "container": "vllm"}
    ]


def test_a_node_prometheus_cannot_scrape_is_a_row_with_that_reason(monitoring: Monitoring) -> None:
    fleet = read_fleet(monitoring.url, timeout=20)
    rows = {r.host: r for r in fleet.readings}
    down = rows["down-1:50051"]
    assert down.status is None and down.error is not None
    assert "cannot scrape its exporter at down-1:50051 (up == 0, job rbln)" in down.error
    # The unrelated job's down target is no NPU node: only the exporter's jobs make rows.
    assert all(not h.startswith("127.0.0.1") for h in rows)
    assert rows["legacy-1"].status is not None and rows["pods-1"].status is not None
    # --match narrows the down targets as it narrows the exporter's series (by the host of their instance).
    assert "down-1:50051" in _rows(monitoring, 'hostname=~"down-.*|legacy-1"')
    assert list(_rows(monitoring, 'hostname="legacy-1"')) == ["legacy-1"]
    assert list(_rows(monitoring, 'hostname="legacy-1",card="RBLN-CR13"')) == ["legacy-1"]


def test_series_that_cannot_be_true_are_named_not_guessed(monitoring: Monitoring) -> None:
    rows = _rows(monitoring, 'hostname=~"junk-1|twice-1"')
    junk, twice = rows["junk-1"], rows["twice-1"]
    assert junk.status is None and junk.error is not None
    assert f"rbln0 uses {CR13 + GIB:,} bytes of {CR13:,} (used above total)" in junk.error
    assert twice.status is None and twice.error is not None
    assert (
        f"rbln0 is reported twice with different memory used ({10 * GIB:,} bytes and {30 * GIB:,} bytes)" in twice.error
    )


def test_match_narrows_and_nothing_scraped_is_said(monitoring: Monitoring) -> None:
    assert list(_rows(monitoring, '{hostname="legacy-1"}')) == ["legacy-1"]
    with pytest.raises(PrometheusError) as nothing:
        read_fleet(monitoring.url, match='hostname="nowhere"', timeout=20)
    assert "No rbln-metrics-exporter series at" in str(nothing.value)
    assert 'matching {hostname="nowhere"}: is the exporter scraped?' in str(nothing.value)
    with pytest.raises(StudioError, match="is not a list of label matchers"):
        read_fleet(monitoring.url, match="up or vector(1)", timeout=20)


def test_a_query_prometheus_refuses_is_its_error(monitoring: Monitoring) -> None:
    with pytest.raises(PrometheusError) as refused:
        read_fleet(monitoring.url, match='hostname=~"("', timeout=20)
    assert "refused the query: bad_data" in refused.value.one_line()
    assert "Check --match" in refused.value.one_line()


def test_memory_history_per_npu(monitoring: Monitoring) -> None:
    history = memory_history(monitoring.url, match='hostname=~"legacy-1|current-1"', duration="5m", timeout=20)
    assert [(h.host, h.device) for h in history] == [
        ("current-1", "rbln0"),
        ("current-1", "rbln1"),
        ("legacy-1", "rbln0"),
        ("legacy-1", "rbln1"),
    ]
    assert history[0].points and {v for _, v in history[0].points} == {40 * GIB}
    times = [t for t, _ in history[0].points]
    assert times == sorted(times)


# ---- authentication --------------------------------------------------------------------------------------------


def test_basic_auth_from_an_http_config_file(guarded: Prometheus, tmp_path: Path) -> None:
    with pytest.raises(PrometheusError) as asked:
        read_fleet(guarded.url, timeout=20)
    assert "asks for credentials (401 Unauthorized)" in asked.value.one_line()
    assert "--prometheus-http-config" in asked.value.one_line()
    (tmp_path / "password").write_text(PASSWORD + "\n")
    config = tmp_path / "http.yml"
    config.write_text(f"basic_auth:\n  username: {USER}\n  password_file: password\n")
    fleet = read_fleet(guarded.url, timeout=20, http_config=config)
    assert [r.host for r in fleet.readings] == ["legacy-1"] and fleet.readings[0].status is not None
    assert fleet.readings[0].status.devices[0].used == 40 * GIB
    wrong = tmp_path / "wrong.yml"
    wrong.write_text(f"basic_auth:\n  username: {USER}\n  password: not-it\n")
    with pytest.raises(PrometheusError) as refused:
        read_fleet(guarded.url, timeout=20, http_config=load_http_config(wrong))
    assert "refused the credentials given (401 Unauthorized)" in refused.value.one_line()


def test_credentials_in_the_url_are_used_and_never_shown(guarded: Prometheus) -> None:
    address = guarded.url.removeprefix("http://")
    fleet = read_fleet(f"http://{USER}:{PASSWORD}@{address}", timeout=20)
    assert fleet.source == guarded.url and PASSWORD not in repr(fleet)
    with pytest.raises(PrometheusError) as refused:
        read_fleet(f"http://{USER}:secret-wrong@{address}", timeout=20)
    assert "secret-wrong" not in refused.value.one_line() and guarded.url in refused.value.one_line()


def test_tls_checked_against_the_ca_of_the_http_config(https: Prometheus, tmp_path: Path) -> None:
    with pytest.raises(PrometheusError) as untrusted:
        read_fleet(https.url, timeout=20)
    said = untrusted.value.one_line()
    assert f"Prometheus at {https.url}: its certificate is not trusted" in said and "tls_config.ca_file" in said
    config = tmp_path / "http.yml"
    config.write_text(f"tls_config:\n  ca_file: {https.ca_file}\n")
    fleet = read_fleet(https.url, timeout=20, http_config=config)
    assert [r.host for r in fleet.readings] == ["legacy-1"] and fleet.readings[0].status is not None
    config.write_text("tls_config:\n  insecure_skip_verify: true\n")
    assert read_fleet(https.url, timeout=20, http_config=config).readings[0].status is not None


def test_http_config_mistakes_are_named(tmp_path: Path) -> None:
    cases = {
        "basic_auth:\n  username: a\n  pasword: b\n": "basic_auth.pasword is not a setting",
        "basic_auth:\n  username: a\nauthorization:\n  credentials: t\n": "give one of basic_auth and authorization",
        "oauth2:\n  client_id: x\n": "oauth2 is not supported",
        "authorization:\n  credentials_file: missing-token\n": "credentials_file",
        "tls_config:\n  cert_file: c.pem\n": "needs both cert_file and key_file",
        "basic_auth: [\n": "is not YAML",
    }
    for text, said in cases.items():
        path = tmp_path / "http.yml"
        path.write_text(text)
        with pytest.raises(StudioError, match=said):
            load_http_config(path)
    (tmp_path / "token").write_text("abc\n")
    (tmp_path / "http.yml").write_text("authorization:\n  credentials_file: token\n")
    assert load_http_config(tmp_path / "http.yml").headers() == {"Authorization": "Bearer abc"}


# ---- what is not a Prometheus, or not there --------------------------------------------------------------------


@pytest.fixture
def silent() -> Iterator[str]:
    """A socket that accepts connections and never answers (a firewall's tarpit, a hung proxy)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    listener.close()


@pytest.fixture
def web_page() -> Iterator[str]:
    """An ordinary web server: a page at /, 404 (an HTML page) at /api/v1/query."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"<html><body>Not found</body></html>"
            self.send_response(200 if self.path == "/" else 404)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with serving(Handler) as url:
        yield url


def test_a_url_that_never_answers_is_bounded_by_the_timeout(silent: str) -> None:
    with pytest.raises(PrometheusError) as late:
        read_fleet(silent, timeout=1)
    assert f"Prometheus at {silent} did not answer within 1 s" in late.value.one_line()
    assert "--timeout" in late.value.one_line()


def test_a_url_that_is_not_a_prometheus(web_page: str) -> None:
    with pytest.raises(PrometheusError) as wrong:
        read_fleet(web_page, timeout=10)
    said = wrong.value.one_line()
    assert f"{web_page} is not a Prometheus: {web_page}/api/v1/query answered 404 Not Found (an HTML page)" in said
    assert "route prefix" in said


def test_a_url_where_nothing_listens() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(PrometheusError) as unreachable:
        read_fleet(f"http://admin:hunter2@127.0.0.1:{port}", timeout=10)
    said = unreachable.value.one_line()
    assert said.startswith(f"Cannot reach Prometheus at http://127.0.0.1:{port}: Connection refused")
    assert "hunter2" not in said and "admin" not in said
