"""Seeding a cache: the entry a `vllm serve` command will hit, and why an artifact cannot be that entry (vllm-rbln
takes the folder's rbln_config.json as the truth, so an artifact of other settings would serve other settings)."""

from __future__ import annotations

from typing import Any

from rbln_artifact_studio.core.location import Location
from rbln_artifact_studio.core.vllm_cache.command import ServeCommand
from rbln_artifact_studio.core.vllm_cache.entries import shown_fields
from rbln_artifact_studio.core.vllm_cache.key import COMPILED_MODELS, KEY_NAMES


def entry_location(root: Location, command: ServeCommand) -> Location:
    """root/compiled_models/<the folder name vllm-rbln gives the command>."""
    return root.child(COMPILED_MODELS).child(command.key.folder_name)


def mismatches(command: ServeCommand, rbln_config: dict[str, Any]) -> list[str]:
    """The key's fields an artifact's rbln_config.json records otherwise than the command asks ([] when it fits)."""
    key = command.key.config_dict()
    out = []
    for name, value in shown_fields(rbln_config).items():
        if name in key and key[name] is not None and key[name] != value:
            out.append(f"{KEY_NAMES.get(name, name)} {value} (the command serves {key[name]})")
    return out
