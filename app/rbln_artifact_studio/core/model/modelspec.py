"""Hugging Face model config.json: the fields that size a decoder-only model, and the bundled presets."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from rbln_artifact_studio.core.errors import ConfigError
from rbln_artifact_studio.core.model.config_fields import dtype_size
from rbln_artifact_studio.core.resources import resource_dir
from rbln_artifact_studio.core.storage.jsonfile import decode_json, read_bytes


class ModelSpec(BaseModel):
    """Architecture figures of a causal LM as its config.json gives them."""

    model_config = ConfigDict(extra="ignore")

    architectures: list[str] = Field(min_length=1)
    model_type: str = ""
    num_hidden_layers: int = Field(ge=1, le=10_000)
    hidden_size: int = Field(ge=1, le=1 << 20)
    intermediate_size: int = Field(ge=1, le=1 << 22)
    num_attention_heads: int = Field(ge=1, le=4096)
    num_key_value_heads: int | None = Field(default=None, ge=1, le=4096)
    head_dim: int | None = Field(default=None, ge=1, le=65536)
    vocab_size: int = Field(ge=1, le=1 << 24)
    max_position_embeddings: int = Field(default=4096, ge=1, le=1 << 24)
    tie_word_embeddings: bool = False
    attention_bias: bool = False
    torch_dtype: str = "float32"
    use_sliding_window: bool = False
    sliding_window: int | None = None
    layer_types: list[str] | None = None

    @model_validator(mode="after")
    def _check(self) -> ModelSpec:
        dtype_size(self.torch_dtype)
        if self.num_key_value_heads and self.num_attention_heads % self.num_key_value_heads:
            raise ValueError("num_attention_heads must be a multiple of num_key_value_heads")
        if self.layer_types is not None and len(self.layer_types) != self.num_hidden_layers:
            raise ValueError("layer_types must name one type per layer")
        return self

    @property
    def architecture(self) -> str:
        return self.architectures[0]

    @property
    def kv_heads(self) -> int:
        return self.num_key_value_heads or self.num_attention_heads

    @property
    def dim_per_head(self) -> int:
        return self.head_dim or self.hidden_size // self.num_attention_heads

    @property
    def dtype_bytes(self) -> int:
        return dtype_size(self.torch_dtype)

    @property
    def dtype_name(self) -> str:
        return self.torch_dtype.removeprefix("torch.")

    @property
    def has_qk_norm(self) -> bool:
        return self.model_type.startswith("qwen3")

    def layer_type(self, index: int) -> str:
        """full_attention, or sliding_attention where the model declares a sliding window for the layer."""
        if self.layer_types is not None:
            return self.layer_types[index]
        if self.use_sliding_window and self.sliding_window:
            return "sliding_attention"
        return "full_attention"


@dataclass(frozen=True)
class ResolvedModel:
    """A model config found for a --model-id, with where it came from."""

    model_id: str
    spec: ModelSpec
    raw: dict[str, Any]
    source_dir: Path | None  # the local folder, or None for a bundled preset


def preset_dir() -> Path:
    return resource_dir() / "model-configs"


def preset_ids() -> list[str]:
    """Hub ids of the bundled presets, e.g. 'Qwen/Qwen3-8B'."""
    return sorted(p.stem.replace("--", "/", 1) for p in preset_dir().glob("*.json"))


def _json_object(raw: object, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a JSON object.")
    return raw


def parse_model_config(raw: object, where: str) -> ModelSpec:
    raw = _json_object(raw, where)
    try:
        spec = ModelSpec.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        field_name = ".".join(str(p) for p in first["loc"]) or "file"
        raise ConfigError(f"{where} is not a usable model config: {field_name}: {first['msg']}.") from None
    if not spec.architecture.endswith("ForCausalLM"):
        raise ConfigError(
            f"{where}: architecture {spec.architecture} is not a decoder-only *ForCausalLM model; "
            "the built-in compiler sizes causal language models only."
        )
    return spec


def resolve_model(model_id: str) -> ResolvedModel:
    """A local folder holding config.json wins; otherwise a bundled preset named after the hub id."""
    local = Path(model_id).expanduser()
    if local.is_dir():
        path = local / "config.json"
        raw = _json_object(decode_json(read_bytes(path), path), str(path))
        return ResolvedModel(model_id, parse_model_config(raw, str(path)), raw, local)
    preset = preset_dir() / (model_id.replace("/", "--", 1) + ".json")
    if "/" in model_id and preset.is_file():
        raw = _json_object(decode_json(preset.read_bytes(), preset), model_id)
        return ResolvedModel(model_id, parse_model_config(raw, model_id), raw, None)
    raise ConfigError(
        f"No local folder {model_id!r} with a config.json, and no bundled preset of that name "
        f"(no download happens offline). Presets: {', '.join(preset_ids())}."
    )
