"""Detection of the real toolchain: the simulator always, optimum-rbln-cli and rebel only where they work."""

from __future__ import annotations

import json

from fakes.install import FakeToolchain

from app.backends.registry import detect_backends

pytest_plugins = ["fakes.plugin"]


def _by_name(infos: list) -> dict:  # type: ignore[type-arg]
    return {info.name: info for info in infos}


def test_without_any_toolchain_only_the_simulator(no_toolchain: None) -> None:
    found = _by_name(detect_backends())
    assert found["sim"].available
    assert not found["optimum"].available and "not found on PATH" in found["optimum"].detail
    assert not found["rebel"].available


def test_fake_on_path_is_found_with_version_and_rebel(fake_optimum: FakeToolchain) -> None:
    found = _by_name(detect_backends())
    assert found["optimum"].available, found["optimum"].detail
    assert found["optimum"].version == "0.12.0"
    assert found["rebel"].available, found["rebel"].detail
    assert found["rebel"].version == "0.9.2+fake"
    assert found["rebel"].path == str(fake_optimum.python)
    print(json.dumps([b.to_json() for b in detect_backends()], indent=1))
