"""optimum-rbln 0.12.0's loading rules, reproduced for tests (its package needs torch and rebel to import).

What load() does, step for step as the package does it (configuration_utils.py load_config and
RBLNModelConfig.from_pretrained/__init__, utils/hub.py validate_files, utils/submodule.py):
legacy `_meta` refused, `cls_name` required and known, every submodule section present with its own cls_name
and loaded the same way, no keyword left that no __init__ along the class chain takes (same message, version hint
included), cache kinds known, memory_budget not beside an explicit count, T5 without kvcache keys, every
`<compiled_model_name>.rbln` present, and each submodule's subfolder loaded as the source of its count.

The accepted keys are the app's table, read from the published wheel by tools/extract_optimum_configs.py; the
cases in tests/test_optimum_loader.py are outcomes the real package gave (docs/optimum-rbln-compat.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rbln_artifact_studio.core.model import upstream

VERSION = "0.12.0"
KNOWN_LAYER_TYPES = ["full_attention", "linear_attention", "sliding_attention"]
EXCLUSIVE = (
    "`memory_budget` and an explicit `kvcache_num_blocks` are mutually exclusive. "
    "`memory_budget` only guides automatic block estimation, which runs when `kvcache_num_blocks` is unset."
)


class LoaderError(Exception):
    """What the real loader would raise, with its message."""


def _unexpected(keys: list[str], version: object) -> str:
    message = f"Unexpected arguments: dict_keys({keys!r})"
    written = upstream.parse_version(version)
    current = upstream.parse_version(VERSION)
    if isinstance(version, str) and written is not None and written != current:
        diff = "newer" if written > current else "older"  # type: ignore[operator]
        message += (
            f"\nMaybe you are trying to load a model compiled with {diff} version of optimum-rbln. "
            "It is recommended to use the same version to compile and load the model.\n"
            f"Current version: {VERSION}, Loaded version: {version}"
        )
    return message


def construct(config: dict[str, Any]) -> dict[str, Any]:
    """RBLNAutoConfig.load_from_dict / cls(**config_file): the checks its __init__ chain makes."""
    cls_name = config.get("cls_name")
    if cls_name is None:
        raise LoaderError("`cls_name` is required.")
    if not upstream.known_class(cls_name):
        raise LoaderError(f"Configuration for {cls_name} not found.")
    for name in upstream.submodules(cls_name):
        if name not in config:
            raise LoaderError(f"Submodule {name} not found in rbln_config.json.")
        if isinstance(config[name], dict):
            construct(config[name])
    unexpected = [k for k in config if k not in upstream.accepted_keys(cls_name)]
    if unexpected:
        raise LoaderError(_unexpected(unexpected, config.get("optimum_rbln_version")))
    for meta in config.get("cache_metas") or config.get("kvcache_metas") or []:
        kind = meta.get("layer_type", "full_attention")
        if kind not in KNOWN_LAYER_TYPES:
            raise LoaderError(
                f"Unknown cache `layer_type` '{kind}'. This artifact was likely compiled with a newer optimum-rbln; "
                f"known types are {KNOWN_LAYER_TYPES}."
            )
    if config.get("memory_budget") is not None and (config.get("kvcache_num_blocks") or 0) > 0:
        raise LoaderError(EXCLUSIVE)
    if upstream.derives_from(cls_name, "RBLNT5ForConditionalGenerationConfig") and (
        config.get("kvcache_num_blocks") is not None or config.get("kvcache_block_size") is not None
    ):
        raise LoaderError(
            "You cannot set kvcache_num_blocks or kvcache_block_size as paged attention is not supported for the model."
        )
    return config


def load_config_file(folder: Path) -> dict[str, Any]:
    """load_config(dir) then cls.from_pretrained(dir): the config as the package would hold it."""
    path = folder / "rbln_config.json"
    if not path.is_file():
        raise LoaderError(f"Could not find `rbln_config.json` file in {folder}")
    config = json.loads(path.read_text())
    if "_meta" in config:
        raise LoaderError(f"`{path}` is an old version. Please recompile the model to get the latest config file.")
    if "cls_name" not in config:
        raise LoaderError("KeyError: 'cls_name'")
    return construct(config)


def load_model(folder: Path) -> dict[str, Any]:
    """RBLN<Model>.from_pretrained(dir) without runtimes: config, compiled graphs, submodule subfolders.

    Returns the config with each submodule section replaced by its subfolder's config, as the package does
    (the subfolder file is the source of truth; the nested copy is only validated).
    """
    config = load_config_file(folder)
    for cfg in config.get("_compile_cfgs") or []:
        graph = folder / f"{cfg['compiled_model_name']}.rbln"
        if not graph.is_file():
            raise LoaderError(
                f"Expected RBLN compiled model '{cfg['compiled_model_name']}.rbln' not found at '{folder}'. "
                "Please ensure all models specified in `rbln_config` are present."
            )
    for name in upstream.submodules(config["cls_name"]):
        config[name] = load_model(folder / name)
    return config
