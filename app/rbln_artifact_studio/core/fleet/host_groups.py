"""Named groups of servers (`--on @rack1`), kept in host_groups.json in the user's config folder."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from rbln_artifact_studio.core.app_dirs import config_dir
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import server_url
from rbln_artifact_studio.core.storage.fsutil import atomic_write_bytes

APP_NAME = "rbln-studio"
FILE_NAME = "host_groups.json"
GROUP_PREFIX = "@"
VERSION = 1
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")  # a new group's name: safe unquoted in a shell, after @
EXAMPLE = json.dumps({"version": VERSION, "groups": {"rack1": [server_url("npu1"), "ops@10.0.0.5:2222"]}})


class HostGroups(BaseModel):
    """The file's content: group name -> servers, each as a server URL (see location.server_url) or a bare HOST."""

    model_config = ConfigDict(extra="forbid")

    version: int = VERSION
    groups: dict[str, list[str]] = Field(default_factory=dict)

    @field_validator("groups")
    @classmethod
    def _names(cls, groups: dict[str, list[str]]) -> dict[str, list[str]]:
        for name in groups:
            if not name or name.startswith(GROUP_PREFIX) or any(c.isspace() for c in name):
                raise ValueError(f"{name!r} is not a group name (letters, digits, - and _; no @, no spaces)")
        return groups


def groups_file() -> Path:
    """host_groups.json in the user's config folder (core/app_dirs: ~/.config/rbln-studio on Linux)."""
    return config_dir() / FILE_NAME


def load_groups(path: Path | None = None) -> HostGroups:
    """The groups saved so far (none when the file is not there); StudioError naming the file when it is broken."""
    path = path or groups_file()
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return HostGroups()
    except OSError as exc:
        raise StudioError(f"Cannot read the server groups in {path}: {exc.strerror}.") from None
    try:
        return HostGroups.model_validate_json(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the file"
        raise StudioError(
            f"{path} is not a server group file ({where}: {first['msg']}).",
            hint=f"Fix it or remove it; its form is {EXAMPLE}",
        ) from None


def check_group_name(name: str) -> str:
    """A name a new group may have (an @ in front is the way to name it, not part of it); StudioError if not."""
    bare = name.removeprefix(GROUP_PREFIX)
    if not NAME.fullmatch(bare):
        raise StudioError(
            f"{name!r} is not a server group name: letters, digits, '.', '-' and '_', starting with a letter or "
            "a digit (e.g. rack1)."
        )
    return bare


def _unknown(name: str, groups: HostGroups, path: Path | None) -> StudioError:
    known = ", ".join(f"@{g}" for g in sorted(groups.groups)) or "none yet"
    return StudioError(
        f"There is no server group @{name} (groups: {known}).",
        hint=f"Groups are kept in {path or groups_file()}; add one with: rbln-studio-cli set-server-group {name} "
        f"{server_url('HOST')} ...",
    )


def save_group(name: str, hosts: Sequence[str], path: Path | None = None) -> Path:
    """Add or replace one group (an empty list removes it); written whole, atomically."""
    path = path or groups_file()
    current = load_groups(path)
    groups = dict(current.groups)
    if hosts:
        groups[check_group_name(name)] = list(dict.fromkeys(hosts))
    else:
        groups.pop(name, None)
    updated = HostGroups(version=VERSION, groups=groups)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(updated.model_dump(), indent=2) + "\n"
    atomic_write_bytes(path, text.encode(), step="host_groups")
    return path


def remove_group(name: str, path: Path | None = None) -> list[str]:
    """Remove one group from the file (written whole, atomically); its servers, or StudioError when there is none."""
    bare = name.removeprefix(GROUP_PREFIX)
    current = load_groups(path)
    if bare not in current.groups:
        raise _unknown(bare, current, path)
    save_group(bare, [], path)
    return current.groups[bare]


def expand(entries: Iterable[str], path: Path | None = None) -> list[str]:
    """The servers named, `@GROUP` replaced by its members; in order, each once."""
    out: list[str] = []
    groups: HostGroups | None = None
    for entry in entries:
        if entry.startswith(GROUP_PREFIX):
            groups = groups or load_groups(path)
            name = entry[len(GROUP_PREFIX) :]
            if name not in groups.groups:
                raise _unknown(name, groups, path)
            out += groups.groups[name]
        else:
            out.append(entry)
    return list(dict.fromkeys(out))
