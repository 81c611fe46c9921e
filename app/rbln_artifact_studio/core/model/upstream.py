"""What optimum-rbln 0.12.0's loader accepts in rbln_config.json, from its config classes' keys (no pydantic)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from rbln_artifact_studio.core.resources import resource_dir

UPSTREAM_VERSION = "0.12.0"
TABLE_NAME = "optimum-rbln-configs.json"  # written by tools/extract_optimum_configs.py from the published wheel

DECODER_BASE = "RBLNDecoderOnlyModelConfig"  # the base of every decoder-only causal LM's config class

# Keys older versions of this tool wrote into rbln_config.json; ours, so a rewrite drops them.
OUR_OLD_KEYS = ("rbln_studio_simulator",)


_installed_version: str | None = None  # set once the toolchain check has found optimum-rbln-cli's version


def note_installed_version(version: str | None) -> None:
    """Remember the installed optimum-rbln's version: version warnings compare against it from now on."""
    global _installed_version
    _installed_version = version


@dataclass(frozen=True)
class ConfigClass:
    """One optimum-rbln config class as its source declares it."""

    name: str
    bases: tuple[str, ...]
    keys: frozenset[str] | None  # its own __init__ parameters; None when it has no __init__ of its own
    forwards: bool  # its __init__ passes **kwargs on to its base
    submodules: tuple[str, ...] | None


@cache
def _classes() -> dict[str, ConfigClass]:
    text = (resource_dir() / TABLE_NAME).read_text(encoding="utf-8")
    table: dict[str, Any] = json.loads(text)
    return {
        name: ConfigClass(
            name,
            tuple(entry.get("bases", ())),
            frozenset(entry["keys"]) if "keys" in entry else None,
            bool(entry.get("forwards", False)),
            tuple(entry["submodules"]) if "submodules" in entry else None,
        )
        for name, entry in table["classes"].items()
    }


def known_class(cls_name: str) -> bool:
    return cls_name in _classes()


@cache
def lineage(cls_name: str) -> tuple[str, ...]:
    """The class and every known base class, nearest first (a scan asks once per row: cached)."""
    classes, out, stack = _classes(), [], [cls_name]
    while stack:
        name = stack.pop(0)
        if name in classes and name not in out:
            out.append(name)
            stack.extend(classes[name].bases)
    return tuple(out)


def derives_from(cls_name: str, base: str) -> bool:
    return base in lineage(cls_name)


@cache
def accepted_keys(cls_name: str) -> frozenset[str]:
    """Every keyword the class's __init__ takes, its own and those it forwards to its bases."""
    entry = _classes().get(cls_name)
    if entry is None:
        return frozenset()
    inherited: frozenset[str] = frozenset().union(*(accepted_keys(b) for b in entry.bases))
    if entry.keys is None:
        return inherited
    return entry.keys | inherited if entry.forwards else entry.keys


@cache
def decoder_keys() -> frozenset[str]:
    """Every key the config class of some decoder-only model takes: what such a file holds."""
    return frozenset().union(*(accepted_keys(c) for c in _classes() if derives_from(c, DECODER_BASE)))


@cache
def submodules(cls_name: str) -> tuple[str, ...]:
    """The nested sections (and subfolders) the class loads, e.g. ('vision_tower', 'language_model')."""
    for name in lineage(cls_name):
        found = _classes()[name].submodules
        if found is not None:
            return found
    return ()


def parse_version(text: object) -> tuple[int, ...] | None:
    """'0.12.0', '0.12.1.dev3+g1234' -> (0, 12, 0) / (0, 12, 1); None when it is not a version."""
    return _parse_version(text) if isinstance(text, str) else None


@lru_cache(maxsize=256)  # bounded: each file may spell its own version
def _parse_version(text: str) -> tuple[int, ...] | None:  # a scan compares the same few strings on every row
    match = re.match(r"\s*v?(\d+(?:\.\d+)*)", text)
    return tuple(int(p) for p in match.group(1).split(".")) if match else None


def _newer(version: str, than: str) -> bool:
    a, b = parse_version(version), parse_version(than)
    if a is None or b is None:
        return False
    width = max(len(a), len(b))
    return a + (0,) * (width - len(a)) > b + (0,) * (width - len(b))


def loader_refusals(raw: dict[str, Any], where: str = "") -> list[str]:
    """Why optimum-rbln 0.12.0's load_config + from_pretrained would refuse this mapping (empty when it loads).

    The same rules as its RBLNModelConfig: the class must be known, every submodule section present, and no
    key left over that no __init__ in the class's chain takes ("Unexpected arguments: dict_keys([...])").
    """
    section = f"section {where!r} of " if where else ""
    cls_name = raw.get("cls_name")
    if not isinstance(cls_name, str):
        return [f"The {section}rbln_config.json has no cls_name; optimum-rbln cannot tell which config class loads it."]
    if not known_class(cls_name):
        return [
            f'optimum-rbln {UPSTREAM_VERSION} has no config class {cls_name} ("Configuration for {cls_name} not found.").'
        ]
    out = []
    accepted = accepted_keys(cls_name)  # once, not once per key (a scan asks this of every row's ~25 keys)
    unexpected = [k for k in raw if k not in accepted]
    if unexpected:
        ours = [k for k in unexpected if k in OUR_OLD_KEYS]
        note = f" ({', '.join(ours)} was written by an older RBLN Artifact Studio; a resize drops it)" if ours else ""
        out.append(
            f"optimum-rbln {UPSTREAM_VERSION} would refuse the {section}rbln_config.json: unexpected keys "
            f'{", ".join(unexpected)} ("Unexpected arguments: dict_keys({unexpected!r})"){note}.'
        )
    for name in submodules(cls_name):
        sub = raw.get(name)
        if sub is None:
            out.append(f'optimum-rbln would refuse it: "Submodule {name} not found in rbln_config.json."')
        elif isinstance(sub, dict):
            out += loader_refusals(sub, f"{where}.{name}" if where else name)
    return out


def version_warning(raw: dict[str, Any], toolchain_version: str | None = None) -> str | None:
    """A warning when the file was written by a newer optimum-rbln than the one that would load it."""
    written = raw.get("optimum_rbln_version")
    if not isinstance(written, str):
        return None
    installed = toolchain_version or _installed_version
    reader = installed or UPSTREAM_VERSION
    if not _newer(written, reader):
        return None
    whose = f"the installed optimum-rbln {reader}" if installed else f"optimum-rbln {reader}"
    return (
        f"Compiled with optimum-rbln {written}, newer than {whose}; that version may refuse to load it. "
        "Load it with the version that compiled it."
    )
