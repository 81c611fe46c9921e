"""Model kinds: what an artifact folder holds (decoder-only, multimodal, encoder-decoder, encoder, pipeline).

One artifact per compiled model whatever its kind. Only a decoder-only causal LM has a resizable KV cache;
a multimodal model's lives in its language model (the nested `language_model` section and subfolder).
Everything here reads JSON with the standard library only (scans call it).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from rbln_artifact_studio.core.errors import ConfigError, NotAnArtifactError, StudioError
from rbln_artifact_studio.core.location import LocalFolder, Location
from rbln_artifact_studio.core.model import upstream
from rbln_artifact_studio.core.portable.files import not_a_file
from rbln_artifact_studio.core.portable.pipeline import PIPELINE_INDEX, is_rbln_pipeline, pipeline_components
from rbln_artifact_studio.core.portable.pipeline import is_pipeline_folder as portable_is_pipeline_folder
from rbln_artifact_studio.core.status import Problem, Status
from rbln_artifact_studio.core.storage.jsonfile import (
    CONFIG_NAME,
    MAX_JSON_BYTES,
    decode_json,
    require_current_format,
)
from rbln_artifact_studio.core.storage.tree import DISK_TREE, Tree

LANGUAGE_MODEL = "language_model"
LM_SECTIONS = (LANGUAGE_MODEL, "text_model")  # where a multimodal model nests its language model (Idefics3: text_model)
GRAPH_SUFFIX = ".rbln"
_ENC_DEC_KEYS = ("enc_max_seq_len", "dec_max_seq_len")
_DECODER_BASE = upstream.DECODER_BASE
_ENC_DEC_BASES = ("RBLNModelForSeq2SeqLMConfig", "RBLNWhisperForConditionalGenerationConfig")


class ModelKind(str, Enum):
    DECODER = "decoder-only"
    MULTIMODAL = "multimodal"
    ENCODER_DECODER = "encoder-decoder"
    ENCODER = "encoder-only"
    PIPELINE = "diffusers pipeline"
    OTHER = "other"


def not_resizable_message(model_dir: str | Path | Location, cls_name: str | None) -> str:
    """optimum-rbln-cli 0.12.0's words for an artifact without a top-level resizable KV cache."""
    return (
        f"The model at '{model_dir}' ({cls_name or 'unknown class'}) does not expose a top-level "
        "resizable kv-cache. Only decoder-only causal LM artifacts are supported."
    )


class NoKvCacheError(StudioError):
    """The folder holds a model without a resizable KV cache; `description` says what it is."""

    def __init__(self, description: ModelDescription) -> None:
        super().__init__(not_resizable_message(description.path, description.cls_name))
        self.description = description


@dataclass(frozen=True)
class Part:
    """One compiled part: the folder's own graphs ("") or a submodule / pipeline component subfolder."""

    name: str
    cls_name: str | None
    npu: str | None = None
    num_devices: int | None = None
    batch_size: int | None = None
    graphs: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModelDescription:
    """What a folder holds, in words and facts: its kind, class, target, batch, compiled graphs, problems."""

    path: Path | Location  # a Location when the folder is not on this computer (a server's)
    kind: ModelKind
    cls_name: str | None
    parts: tuple[Part, ...]
    kv_section: str | None = None  # where the resizable KV settings live: "" at the top level, or a section name
    kv_note: str | None = None  # why there is no resizable KV cache, in words
    problems: tuple[Problem, ...] = field(default_factory=tuple)

    @property
    def where(self) -> Location:
        """Where the folder lives, as a user would type it (str() shows it)."""
        return LocalFolder(self.path) if isinstance(self.path, Path) else self.path

    def _first(self, attr: str) -> Any:
        return next((getattr(p, attr) for p in self.parts if getattr(p, attr) is not None), None)

    @property
    def npu(self) -> str | None:
        return self._first("npu")

    @property
    def num_devices(self) -> int | None:
        return self._first("num_devices")

    @property
    def batch_size(self) -> int | None:
        return self._first("batch_size")


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _compile_cfgs(raw: dict[str, Any]) -> list[dict[str, Any]]:
    cfgs = raw.get("_compile_cfgs")
    return [c for c in cfgs if isinstance(c, dict)] if isinstance(cfgs, list) else []


def part_of(name: str, raw: dict[str, Any]) -> Part:
    """A part's facts from its config mapping (npu and num_devices sit in _compile_cfgs in 0.12 files)."""
    cfgs = _compile_cfgs(raw)
    first = cfgs[0] if cfgs else {}
    npu = raw.get("npu") if isinstance(raw.get("npu"), str) else first.get("npu")
    devices = _int(raw.get("num_devices")) or _int(raw.get("tensor_parallel_size")) or _int(first.get("num_devices"))
    if devices is None and cfgs:
        devices = 1  # optimum-rbln saves num_devices: null when the compile did not set it: one device
    graphs = tuple(c["compiled_model_name"] for c in cfgs if isinstance(c.get("compiled_model_name"), str))
    cls_name = raw.get("cls_name")
    return Part(
        name,
        cls_name if isinstance(cls_name, str) else None,
        npu if isinstance(npu, str) else None,
        devices,
        _int(raw.get("batch_size")),
        graphs,
    )


def section_names(raw: dict[str, Any]) -> list[str]:
    """The nested sub-config sections: the class's submodules, or any section that names its own cls_name."""
    cls_name = raw.get("cls_name")
    if isinstance(cls_name, str) and upstream.known_class(cls_name):
        return [s for s in upstream.submodules(cls_name) if isinstance(raw.get(s), dict)]
    return [k for k, v in raw.items() if isinstance(v, dict) and isinstance(v.get("cls_name"), str)]


def kind_of(raw: dict[str, Any]) -> tuple[ModelKind, str | None]:
    """The kind of an rbln_config.json mapping and where its resizable KV settings live (None: nowhere)."""
    cls_name = raw.get("cls_name")
    known = isinstance(cls_name, str) and upstream.known_class(cls_name)
    sections = section_names(raw)
    for name in LM_SECTIONS:
        if name in sections and not (known and upstream.derives_from(str(cls_name), _DECODER_BASE)):
            return ModelKind.MULTIMODAL, name if "kvcache_num_blocks" in raw[name] else None
    if known and upstream.derives_from(str(cls_name), _DECODER_BASE):
        return ModelKind.DECODER, ""
    if (known and any(upstream.derives_from(str(cls_name), b) for b in _ENC_DEC_BASES)) or any(
        k in raw for k in _ENC_DEC_KEYS
    ):
        return ModelKind.ENCODER_DECODER, None
    if not known and (
        not isinstance(cls_name, str)  # no class to go by: read it as the decoder it most likely is
        or cls_name.endswith("ForCausalLMConfig")
        or any(k.startswith("kvcache_") or k in ("cache_metas", "kvcache_metas") for k in raw)
    ):
        return ModelKind.DECODER, ""
    if section_names(raw):
        return ModelKind.OTHER, None
    if "max_seq_len" in raw:
        return ModelKind.ENCODER, None
    return ModelKind.OTHER, None


def _kv_note(kind: ModelKind, cls_name: str | None, raw: dict[str, Any]) -> str:
    who = cls_name or "This model"
    if kind is ModelKind.ENCODER_DECODER:
        own = raw.get("kvcache_num_blocks")
        cache = f" (its decoder keeps its own cache: kvcache_num_blocks={own})" if _int(own) is not None else ""
        return (
            f"{who} is an encoder-decoder{cache}; it has no top-level resizable KV cache, so it cannot be "
            "resized (optimum-rbln-cli resizes only decoder-only causal LMs)."
        )
    if kind is ModelKind.PIPELINE:
        return f"{who} is a diffusers pipeline; its components have no KV cache, so there is nothing to resize."
    if kind is ModelKind.MULTIMODAL:
        return f"{who} has no language model section with a KV cache, so there is nothing to resize."
    return f"{who} has no KV cache (it is {'an encoder' if kind is ModelKind.ENCODER else 'not a causal LM'}), so there is nothing to resize."


def missing_graph(path: Path | None, shown: str) -> Problem:
    """The problem of an expected graph (`shown`: its name as the row says it) that is no file: missing, or
    something else under its name (a FIFO, a folder, a link to nothing), said as such. path None: the folder is
    not on this computer (what a server sent is all there is)."""
    what = None
    if path is not None:
        try:
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                mode = os.stat(path).st_mode
        except FileNotFoundError:
            what = "a link to nothing" if os.path.islink(path) else None
        except OSError as exc:
            what = f"unreadable ({exc.strerror or exc})"
        else:
            what = not_a_file(mode)
    if what is None:
        return Problem(Status.INVALID, f"Expected compiled graph '{shown}' is missing.")
    return graph_not_a_file(shown, what)


def graph_not_a_file(shown: str, what: str) -> Problem:
    """The problem of an expected graph whose name holds `what` ("a named pipe (FIFO)") instead of a file."""
    return Problem(Status.INVALID, f"Expected compiled graph '{shown}' is not a regular file: it is {what}.")


def _missing_graphs(folder: Path, part: Part, tree: Tree = DISK_TREE) -> list[Problem]:
    where = folder / part.name if part.name else folder
    prefix = f"{part.name}/" if part.name else ""
    problems = []
    if not tree.is_dir(where):
        return [Problem(Status.INVALID, f"The {part.name}/ subfolder is missing.")]
    for graph in part.graphs:
        path = where / f"{graph}{GRAPH_SUFFIX}"
        if not tree.is_file(path):
            problems.append(missing_graph(path if tree.on_disk else None, f"{prefix}{graph}.rbln"))
    if part.name and not tree.is_file(where / CONFIG_NAME):
        problems.append(Problem(Status.INVALID, f"{part.name}/{CONFIG_NAME} is missing."))
    return problems


def upstream_problems(raw: dict[str, Any]) -> list[Problem]:
    """Warnings for what optimum-rbln 0.12.0 (or the installed version, once found) would refuse to load."""
    problems = [Problem(Status.WARNING, m) for m in upstream.loader_refusals(raw)]
    skew = upstream.version_warning(raw)
    if skew:
        problems.append(Problem(Status.WARNING, skew))
    return problems


def read_json(path: Path, tree: Tree = DISK_TREE) -> dict[str, Any]:
    """A JSON object file, with errors a user can act on (the legacy `_meta` format refused)."""
    return require_current_format(decode_json(tree.read(path), path), path)


def describe_config(
    folder: Path, raw: dict[str, Any], checked_elsewhere: str | None = None, tree: Tree = DISK_TREE
) -> ModelDescription:
    """A folder holding rbln_config.json: kind, parts (its own graphs and each section's subfolder), problems.

    checked_elsewhere names a part whose files the caller checks itself (the language model of an open VLM;
    "": the top level, a decoder whose own graphs the artifact reader checks).
    """
    kind, kv_section = kind_of(raw)
    cls_name = raw.get("cls_name") if isinstance(raw.get("cls_name"), str) else None
    parts = [part_of("", raw)]
    parts += [part_of(name, raw[name]) for name in section_names(raw)]
    problems: list[Problem] = []
    for part in parts:
        if part.name != checked_elsewhere:
            problems += _missing_graphs(folder, part, tree)
    if checked_elsewhere != "" and not any(p.graphs for p in parts) and not tree.has_graphs(folder):
        problems.append(Problem(Status.INVALID, "No .rbln compiled graphs in this folder."))
    problems += upstream_problems(raw)
    note = None if kv_section is not None else _kv_note(kind, cls_name, raw)
    return ModelDescription(folder, kind, cls_name, tuple(parts), kv_section, note, tuple(problems))


def describe_pipeline(folder: Path, index: dict[str, Any], tree: Tree = DISK_TREE) -> ModelDescription:
    """A diffusers pipeline: one artifact, its compiled components (text_encoder, unet, vae, ...) as parts."""
    cls_name = index.get("_class_name") if isinstance(index.get("_class_name"), str) else None
    parts: list[Part] = []
    problems: list[Problem] = []
    for name, component_cls in pipeline_components(index):
        path = folder / name / CONFIG_NAME
        try:
            raw = read_json(path, tree)
        except ConfigError as exc:
            parts.append(Part(name, component_cls + "Config"))
            problems.append(Problem(Status.INVALID, f"Component {name}: {exc.message}"))
            continue
        part = part_of(name, raw)
        parts.append(part)
        problems += _missing_graphs(folder, part, tree)
        problems += [Problem(p.severity, f"Component {name}: {p.message}") for p in upstream_problems(raw)]
    if not parts:
        problems.append(Problem(Status.INVALID, f"{PIPELINE_INDEX} lists no component compiled by optimum-rbln."))
    return ModelDescription(
        folder,
        ModelKind.PIPELINE,
        cls_name,
        tuple(parts),
        None,
        _kv_note(ModelKind.PIPELINE, cls_name, index),
        tuple(problems),
    )


def is_pipeline_folder(folder: str | Path) -> bool:
    """True for a folder with an optimum-rbln model_index.json and no rbln_config.json of its own."""
    return portable_is_pipeline_folder(folder, CONFIG_NAME, MAX_JSON_BYTES)


def describe_folder(folder: Path, tree: Tree = DISK_TREE) -> ModelDescription:
    """Describe whatever compiled model the folder holds; raises ConfigError when it holds none."""
    if not tree.exists(folder / CONFIG_NAME) and tree.is_file(folder / PIPELINE_INDEX):
        index = decode_json(tree.read(folder / PIPELINE_INDEX), folder / PIPELINE_INDEX)
        if is_rbln_pipeline(index):
            assert isinstance(index, dict)
            return describe_pipeline(folder, index, tree)
    return describe_config(folder, read_json(folder / CONFIG_NAME, tree), tree=tree)


@dataclass(frozen=True)
class KvLocation:
    """Where an artifact's resizable KV cache lives.

    model_dir holds the decoder's rbln_config.json and graphs. For a multimodal model, vlm_root is the model's
    folder and section the nested section (`language_model`) that must record the same count.
    """

    model_dir: Path
    vlm_root: Path | None = None
    section: str | None = None
    description: ModelDescription | None = None

    @property
    def lock_dir(self) -> Path:
        """The folder whose lock guards every file a resize writes."""
        return self.vlm_root or self.model_dir


def vlm_parent(folder: Path, tree: Tree = DISK_TREE) -> tuple[Path, dict[str, Any]] | None:
    """The multimodal model folder whose nested section this folder is (language_model/), with its config."""
    parent = folder.parent
    if folder.name not in LM_SECTIONS or not tree.is_file(parent / CONFIG_NAME):
        return None
    try:
        raw = read_json(parent / CONFIG_NAME, tree)
    except ConfigError:
        return None
    kind, section = kind_of(raw)
    return (parent, raw) if kind is ModelKind.MULTIMODAL and section == folder.name else None


def kv_location(folder: Path, tree: Tree = DISK_TREE) -> KvLocation:
    """Where the folder's resizable KV cache is; raises NoKvCacheError (with a description) for kinds without one.
    tree: where the folder's files are read (this computer's disk, or what a server or a bucket gave of them)."""
    folder = Path(folder)
    config = folder / CONFIG_NAME
    if not tree.exists(config):
        if tree.is_file(folder / PIPELINE_INDEX):
            raise NoKvCacheError(describe_folder(folder, tree))
        if not (tree.on_disk and os.path.islink(config)):  # a link to nothing is a config that cannot be read
            raise NotAnArtifactError(f"{config} does not exist: this folder is not a compiled artifact.")
    raw = read_json(config, tree)
    kind, section = kind_of(raw)
    if kind is ModelKind.DECODER:
        parent = vlm_parent(folder, tree)
        if parent is not None:
            described = describe_config(parent[0], parent[1], folder.name, tree)
            return KvLocation(folder, parent[0], folder.name, described)
        if section_names(raw):  # a decoder with compiled parts of its own (Qwen2-VL's visual/): check them too
            return KvLocation(folder, description=describe_config(folder, raw, "", tree))
        return KvLocation(folder)
    if section:
        return KvLocation(folder / section, folder, section, describe_config(folder, raw, section, tree))
    raise NoKvCacheError(describe_config(folder, raw, tree=tree))


def out_of_step(vlm_root: Path, section: str, count: int, nested: object) -> Problem | None:
    """A warning when a VLM's nested section records another count than its language model's own file."""
    if _int(nested) == count:
        return None
    return Problem(
        Status.WARNING,
        f"{section}/rbln_config.json records kvcache_num_blocks={count}, but the {section} section of "
        f"{vlm_root.name}/rbln_config.json records {nested}; optimum-rbln loads {count}. "
        "Resize again to bring them in step.",
    )


def nested_count(vlm_root: Path, section: str, tree: Tree = DISK_TREE) -> int | None:
    """The block count the multimodal model's own rbln_config.json records for its language model."""
    try:
        raw = read_json(vlm_root / CONFIG_NAME, tree)
    except ConfigError:
        return None
    nested = raw.get(section)
    return _int(nested.get("kvcache_num_blocks")) if isinstance(nested, dict) else None


def listing_dirs(folder: str) -> list[str]:
    """Subfolders of an artifact that hold a compiled part (their files belong to the artifact's row)."""
    out = []
    try:
        with os.scandir(folder) as it:
            for entry in it:
                if entry.name.startswith(".") or not entry.is_dir():
                    continue
                if os.path.exists(os.path.join(entry.path, CONFIG_NAME)):
                    out.append(entry.name)
    except OSError:
        return []
    return sorted(out)


def block_count(folder: str | Path) -> int:
    """kvcache_num_blocks the toolchain loads for this folder (a VLM's language model's); the get command.

    Raises NoKvCacheError for kinds without a resizable KV cache, as optimum-rbln-cli refuses them.
    """
    location = kv_location(Path(folder))
    path = location.model_dir / CONFIG_NAME
    found = read_json(path).get("kvcache_num_blocks")
    count = _int(found)
    if count is None:
        raise ConfigError(f"{path} has no integer kvcache_num_blocks (found {found!r}); it is not a decoder artifact.")
    return count
