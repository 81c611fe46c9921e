"""vllm-rbln 0.12.0's own cache-key function, run from its installed wheel with stand-ins for what it imports.

`bash bootstrap.sh test` installs the wheel without its dependencies (vllm, torch and optimum-rbln never install);
this loads utils/optimum/converter/dispatch.py and common.py from it, as they are, with tiny stand-in modules for the
names they import and never call on the key's path.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

VERSION = "0.12.0"


def wheel_dir() -> Path:
    try:
        dist = metadata.distribution("vllm-rbln")
    except metadata.PackageNotFoundError:
        pytest.fail(f"vllm-rbln {VERSION} is not installed: run `bash bootstrap.sh test` (it installs it --no-deps).")
    if dist.version != VERSION:
        pytest.fail(f"vllm-rbln {dist.version} is installed; the oracle is {VERSION}: run `bash bootstrap.sh test`.")
    return Path(str(dist.locate_file("vllm_rbln")))


class OptimumRBLNConfig:  # stand-in: only its attributes are read on the key's path
    def __init__(self, num_devices_per_local_rank: int, optimum_overrides: dict[str, Any], mnbt: int | None) -> None:
        self.num_devices_per_local_rank = num_devices_per_local_rank
        self.optimum_overrides = optimum_overrides
        self.user_max_num_batched_tokens = mnbt


class TorchDtype:  # stand-in for a torch.dtype: vllm-rbln hashes str() of it
    def __init__(self, name: str) -> None:
        self.name = name

    def __str__(self) -> str:
        return self.name


def _module(name: str, path: Path | None = None, **attrs: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    if path is not None:
        module.__path__ = [str(path)]
    for key, value in attrs.items():
        setattr(module, key, value)
    return module


def _load(monkeypatch: pytest.MonkeyPatch, name: str, file: Path) -> types.ModuleType:
    """The wheel's module at file, as name (in sys.modules until the test ends, for the imports between them)."""
    spec = importlib.util.spec_from_file_location(name, file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


def key_function(monkeypatch: pytest.MonkeyPatch) -> Any:
    """vllm-rbln's `_generate_model_path_name(vllm_config) -> folder name`, from the wheel's own source."""
    root = wheel_dir()
    optimum = root / "utils" / "optimum"
    conv = optimum / "converter"
    stand_ins = {
        "vllm_rbln": _module("vllm_rbln", root),
        "vllm_rbln.utils": _module("vllm_rbln.utils", root / "utils"),
        "vllm_rbln.utils.optimum": _module("vllm_rbln.utils.optimum", optimum),
        "vllm_rbln.utils.optimum.converter": _module("vllm_rbln.utils.optimum.converter", conv),
        "vllm_rbln.envs": _module("vllm_rbln.envs", VLLM_CACHE_ROOT="/nonexistent"),
        "vllm_rbln.config": _module("vllm_rbln.config", OptimumRBLNConfig=OptimumRBLNConfig),
        "vllm_rbln.logger": _module("vllm_rbln.logger", init_logger=lambda name: None),
        "vllm_rbln.utils.optimum.registry": _module("r", is_enc_dec_arch=None, is_pooling_arch=None),
        "vllm_rbln.utils.optimum.converter.from_optimum": _module("o", sync_from_optimum=None),
        "vllm_rbln.utils.optimum.converter.from_vllm": _module("v", sync_from_vllm=None),
        "vllm_rbln.utils.optimum.converter.params": _module("p", load_compiled_rbln_config=None),
    }
    for name, module in stand_ins.items():
        monkeypatch.setitem(sys.modules, name, module)
    _load(monkeypatch, "vllm_rbln.utils.optimum.paths", optimum / "paths.py")  # the real one: it imports os only
    _load(monkeypatch, "vllm_rbln.utils.optimum.converter.common", conv / "common.py")
    dispatch = _load(monkeypatch, "vllm_rbln.utils.optimum.converter.dispatch", conv / "dispatch.py")
    return dispatch._generate_model_path_name


def vllm_config(
    model: str,
    max_num_seqs: int,
    block_size: int | None,
    max_model_len: int,
    dtype: str,
    gpu_memory_utilization: float,
    num_devices: int,
    optimum_overrides: dict[str, Any],
    max_num_batched_tokens: int | None,
) -> Any:
    """A VllmConfig as vllm-rbln reads it when it names the cache folder (SimpleNamespaces of the fields read)."""
    ns = types.SimpleNamespace
    return ns(
        model_config=ns(model=model, max_model_len=max_model_len, dtype=TorchDtype(dtype)),
        scheduler_config=ns(max_num_seqs=max_num_seqs),
        cache_config=ns(block_size=block_size, gpu_memory_utilization=gpu_memory_utilization),
        additional_config=OptimumRBLNConfig(num_devices, optimum_overrides, max_num_batched_tokens),
    )
