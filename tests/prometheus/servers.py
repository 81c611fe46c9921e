"""A real Prometheus (Debian's package) on 127.0.0.1 scraping the exporter stand-in in gateway mode, a second one
behind basic auth and a third serving HTTPS: one set for the whole session, whichever folder's tests ask first.

A plugin of tests/conftest.py, not fixtures imported into test modules: a session fixture imported into a module is
a second fixture there, and started a second exporter thread and three more Prometheus servers for the session.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from prometheus.conftest import NODES, Monitoring
from prometheus.promserver import Prometheus, missing, running_exporter, running_prometheus


@pytest.fixture(scope="session")
def _servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Monitoring, Prometheus, Prometheus]]:
    """The three servers, started at once: most of a start is waiting for the first scrape."""
    absent = missing()
    if absent is not None:
        pytest.skip(f"needs {absent} (tools/system_packages.sh installs it when root)")
    root = tmp_path_factory.mktemp("prometheus")
    state = root / "exporter.json"
    state.write_text(json.dumps({"nodes": NODES}))
    with (
        running_exporter(state) as gateway,
        running_prometheus(root / "server", gateway, list(NODES), wait_targets=False) as prometheus,
        running_prometheus(root / "auth", gateway, ["legacy-1"], basic_auth=True, wait_targets=False) as guarded,
        running_prometheus(root / "tls", gateway, ["legacy-1"], tls=True, wait_targets=False) as https,
    ):
        prometheus.wait_scraped(len(NODES))
        guarded.wait_scraped(1)
        https.wait_scraped(1)
        yield Monitoring(prometheus, gateway, state), guarded, https


@pytest.fixture(scope="session")
def monitoring(_servers: tuple[Monitoring, Prometheus, Prometheus]) -> Monitoring:
    return _servers[0]


@pytest.fixture(scope="session")
def guarded(_servers: tuple[Monitoring, Prometheus, Prometheus]) -> Prometheus:
    """A second Prometheus behind basic auth (its --web.config.file), scraping the same stand-in."""
    return _servers[1]


@pytest.fixture(scope="session")
def https(_servers: tuple[Monitoring, Prometheus, Prometheus]) -> Prometheus:
    """A third one serving HTTPS with a self-signed certificate for 127.0.0.1 (its --web.config.file)."""
    return _servers[2]
