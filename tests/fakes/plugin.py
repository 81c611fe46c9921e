"""pytest fixtures that install the fake toolchain on PATH (load with `pytest_plugins = ["fakes.plugin"]`)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.install import CONFIG_VARS, KNOBS, TINY_CA25, FakeToolchain, build_toolchain, fake_compile
from rbln_artifact_studio.backends.toolchain import clear_cache


def _path_without_optimum() -> str:
    dirs = os.environ.get("PATH", "").split(os.pathsep)
    return os.pathsep.join(d for d in dirs if d and not Path(d, "optimum-rbln-cli").exists())


@pytest.fixture(scope="session")
def toolchain(tmp_path_factory: pytest.TempPathFactory) -> FakeToolchain:
    """optimum-rbln-cli and rebel both installed in one environment."""
    return build_toolchain(tmp_path_factory.mktemp("toolchain"))


@pytest.fixture(scope="session")
def toolchain_without_rebel(tmp_path_factory: pytest.TempPathFactory) -> FakeToolchain:
    """optimum-rbln-cli installed, rebel-compiler missing (a broken install)."""
    return build_toolchain(tmp_path_factory.mktemp("toolchain-no-rebel"), with_rebel=False)


@pytest.fixture
def no_toolchain(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No optimum-rbln-cli on PATH, no configuration, no fake knobs, fresh detection."""
    for name in (*CONFIG_VARS, *KNOBS):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", _path_without_optimum())
    clear_cache()
    yield
    clear_cache()


@pytest.fixture
def fake_optimum(no_toolchain: None, toolchain: FakeToolchain, monkeypatch: pytest.MonkeyPatch) -> FakeToolchain:
    """The fake toolchain (optimum-rbln-cli and rebel) found through PATH, as a user's install would be."""
    monkeypatch.setenv("PATH", f"{toolchain.path_dir}{os.pathsep}{os.environ['PATH']}")
    clear_cache()
    return toolchain


@pytest.fixture
def real_artifact(toolchain: FakeToolchain, tiny_model: Path, tmp_path: Path) -> Path:
    """An artifact the (fake) real compiler wrote: opaque .rbln files, kvcache_num_blocks 16."""
    return fake_compile(
        toolchain, tiny_model, tmp_path / "artifacts" / "tiny-ca25", *TINY_CA25, "--memory-budget", "0.5"
    )


@pytest.fixture
def mid_artifact(toolchain: FakeToolchain, tiny_model: Path, tmp_path: Path) -> Path:
    """Like real_artifact with 8 KV heads of 128: 2 MiB per tensor per block (8 MiB per block), 16 blocks.

    Weights and workspace take 58.5 MiB per chiplet, so a budget of 160 MiB fits 12 blocks and 13 do not.
    """
    model = tmp_path / "mid-llama"
    model.mkdir()
    config = json.loads((tiny_model / "config.json").read_text())
    config.update(num_attention_heads=8, num_key_value_heads=8, head_dim=128)
    (model / "config.json").write_text(json.dumps(config))
    return fake_compile(toolchain, model, tmp_path / "artifacts" / "mid-ca25", *TINY_CA25)


@pytest.fixture
def argv_log(fake_optimum: FakeToolchain, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fake toolchain on PATH, recording every command line it is run with into this file."""
    log = tmp_path / "argv.jsonl"
    monkeypatch.setenv("FAKE_OPTIMUM_ARGV_LOG", str(log))
    return log
