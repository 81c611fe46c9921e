"""rbln_config.json read by a lean reader (read_view), loaded with clear errors (the pydantic model in
config_model.py), and rewritten losslessly; the keys we use and their figures are config_fields.py's."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rbln_artifact_studio.core.errors import ConfigError
from rbln_artifact_studio.core.model.config_checks import expected_graph_names
from rbln_artifact_studio.core.model.config_fields import (
    CacheTensor,
    ConfigFields,
    _once,
    config_check,
)
from rbln_artifact_studio.core.model.config_reader import decode, record_fields
from rbln_artifact_studio.core.model.upstream import OUR_OLD_KEYS
from rbln_artifact_studio.core.storage.jsonfile import (
    CONFIG_NAME,
    decode_json,
    read_bytes,
    require_current_format,
)

if TYPE_CHECKING:
    from typing_extensions import Self

# ---- the lean reader ----------------------------------------------------------------------------------------------
# A scan reads thousands of configs and writes none: msgspec decodes the keys a row reads, typed and with the
# model's limits, in one pass over the file's bytes (config_reader.py), and builds nothing of the rest (most of the
# file: _compile_cfgs' input_info), without pydantic's import and schema builds (~0.1 s of CPU per process). The
# model (config_model.py) words the errors: a file the reader refuses or does not plainly take goes there.

_FULL_PATH_FIELDS = frozenset({"tensor_parallel_size", "kvcache_metas", "legacy_meta"})


class ConfigRecord(ConfigFields):
    """What a scan row shows of rbln_config.json, read straight from the file's bytes (see read_view).

    Keys it does not model are kept (small values in a decoder file), so the scan can tell the model's kind and
    what optimum-rbln's loader would refuse without parsing the file twice.
    """

    cache_metas: Sequence[CacheTensor] | None
    compile_cfgs: list[dict[str, Any]] | None

    def __init__(
        self, fields: dict[str, Any], extra: dict[str, Any], fields_set: set[str], keys: tuple[str, ...]
    ) -> None:
        self.__dict__.update(fields)  # the schema's field names only: a file's own keys are in `extra`
        self.model_extra = extra
        self.model_fields_set = fields_set  # npu and num_devices taken from _compile_cfgs[0] too, as pydantic's
        self._keys = keys  # the file's top-level keys (in its order, where the loader would refuse one of them)

    # Asked several times a scan row (the checks, the row, the fit): worked out once. The file is read once and
    # never changed here; model_copy forgets them with the fields it replaces.
    attn = _once(ConfigFields.attn)
    block_size = _once(ConfigFields.block_size)
    num_full_blocks = _once(ConfigFields.num_full_blocks)
    num_min_blocks = _once(ConfigFields.num_min_blocks)

    _DERIVED = ("attn", "block_size", "num_full_blocks", "num_min_blocks", "_kv_scan")

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy with some fields replaced, as pydantic's model_copy (not validated again)."""
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        if update:
            for name in self._DERIVED:
                copy.__dict__.pop(name, None)
            copy.__dict__.update(update)
            copy.model_fields_set = self.model_fields_set | set(update)
        return copy

    @property
    def needs_full_path(self) -> bool:
        if self.model_fields_set & _FULL_PATH_FIELDS:
            return True
        cfgs = self.compile_cfgs or []
        return bool(cfgs) and "tensor_parallel_size" in cfgs[0]

    def top_level_stand_in(self) -> dict[str, Any]:
        """The file's top-level keys with the values kinds and the loader rules look at (the others are None)."""
        # The file's keys, not the fields set: the loader's warning lists the keys it refuses in the file's order,
        # and npu taken from _compile_cfgs[0] is no key of the file.
        out: dict[str, Any] = dict.fromkeys(self._keys)
        if "cls_name" in out:
            out["cls_name"] = self.cls_name
        out.update(self.model_extra)
        return out

    @property
    def expected_graph_names(self) -> list[str]:
        """Graph names _compile_cfgs promises (as config_checks.expected_graph_names reads the raw file)."""
        names = (c.get("compiled_model_name") for c in self.compile_cfgs or ())
        return [n for n in names if isinstance(n, str)]

    def _cache_meta_entries(self) -> Iterable[CacheTensor] | None:
        return self.cache_metas


def read_view(data: bytes) -> ConfigRecord | None:
    """The scan's lean reader: the fields when the pydantic model (config_model.RblnConfig) would accept the file
    with the same figures.

    None means "use load_config / parse_config": the file is invalid (so the full model words the error), or uses
    older key names.
    """
    values = decode(data)
    read = None if values is None else record_fields(values)
    if read is None:
        return None
    view = ConfigRecord(*read)
    if config_check(view.attn_impl, view.block_size, view.max_seq_len) is not None or view.needs_full_path:
        return None
    return view


class LoadedConfig:
    """A parsed rbln_config.json: the validated model, and the raw mapping every rewrite starts from.

    A file read_view accepts keeps its bytes and is decoded into the raw mapping only when something asks for
    it (a rewrite, a report): reading an artifact parses its config once.
    """

    def __init__(
        self,
        path: Path,
        raw: dict[str, Any] | None,
        model: ConfigFields,
        data: bytes | None = None,
        stand_in: dict[str, Any] | None = None,
    ) -> None:
        if raw is None and data is None:
            raise ValueError("LoadedConfig needs the raw mapping or the file's bytes")
        self.path = path
        self.model = model
        self._raw = raw
        self._data = data
        self._stand_in = stand_in  # the view's top_level_stand_in() when the reader made it already (read only)

    @property
    def raw(self) -> dict[str, Any]:
        if self._raw is None:
            assert self._data is not None
            self._raw = require_current_format(decode_json(self._data, self.path), self.path)
        return self._raw

    @property
    def data(self) -> bytes | None:
        """The file's bytes as read, when it was read from them (repeated keys show only there)."""
        return self._data

    @property
    def top_level(self) -> dict[str, Any]:
        """The top-level keys with the values kinds and the loader rules look at (the raw mapping when decoded)."""
        if self._raw is None and isinstance(self.model, ConfigRecord):
            if self._stand_in is None:
                self._stand_in = self.model.top_level_stand_in()
            return self._stand_in
        return self.raw

    @property
    def graph_names(self) -> list[str]:
        """The graphs _compile_cfgs promises."""
        if self._raw is None and isinstance(self.model, ConfigRecord):
            return self.model.expected_graph_names
        return expected_graph_names(self.raw)


def parse_config(raw: object, path: Path) -> LoadedConfig:
    """Validate an already-decoded rbln_config.json mapping."""
    # The scan's lean reader (read_view) takes every valid file without the model (tests/test_config_reader.py).
    # deferred: pydantic (~0.1 s of CPU), loaded with the first file the lean reader passes on
    from rbln_artifact_studio.core.model.config_model import RblnConfig, ValidationError, first_error

    mapping: dict[str, Any] = require_current_format(raw, path)
    try:
        model = RblnConfig.model_validate(mapping)
    except ValidationError as exc:
        raise ConfigError(f"{path} is not a valid rbln_config.json: {first_error(exc)}.") from None
    except RecursionError:
        raise ConfigError(f"{path} is nested too deeply to be an rbln_config.json.") from None
    return LoadedConfig(path, mapping, model)


def load_config(artifact_dir: Path, read: Callable[[Path], bytes] = read_bytes) -> LoadedConfig:
    """Read and validate DIR/rbln_config.json (parsed once: read_view's model when it accepts the file); read: how
    a small file is read where the artifact lives (this computer's disk by default)."""
    path = Path(artifact_dir) / CONFIG_NAME
    return config_from_bytes(read(path), path)


def config_from_bytes(data: bytes, path: Path) -> LoadedConfig:
    """A config file's bytes, validated: the fast view when it gives RblnConfig's figures, else the full model
    (which words every error and applies the older key names)."""
    view = read_view(data)
    if view is not None:
        return LoadedConfig(path, None, view, data)
    return parse_config(decode_json(data, path), path)


def with_block_count(raw: dict[str, Any], num_blocks: int) -> dict[str, Any]:
    """A copy of the raw config recording a new block count; every other key is kept as it was, except ours.

    Only the top-level count changes: optimum-rbln records num_full_blocks in the metas' shape[0]
    whatever the pool holds, so the metas describe the tensors, not the current pool. Keys older versions
    of this tool wrote (OUR_OLD_KEYS) are dropped: optimum-rbln's loader refuses them.
    """
    kept = {k: v for k, v in raw.items() if k not in OUR_OLD_KEYS}
    return {**kept, "kvcache_num_blocks": num_blocks}


def dumps_config(raw: dict[str, Any]) -> bytes:
    """Serialize as optimum-rbln does: two-space indent, key order kept, UTF-8, trailing newline."""
    return (json.dumps(raw, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
