"""The simulator's memory model: what each compiled graph would allocate per node and chiplet, by key.

Tensor parallelism spans every chiplet of every device (num_devices x chiplets shards). Weights are
sharded by heads, MLP columns and vocabulary; workspace is the activations of one prefill chunk or one
decode step; KV tensors hold num_kv_heads / shards heads each. The per-graph kernel (program) size is the
one calibration constant per family, chosen so that DESIGN section 8 comes out exactly (see docs/simulator.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from rbln_artifact_studio.core.estimation.estimator import KV_KEY, GraphAllocations, Grid
from rbln_artifact_studio.core.model.modelspec import ModelSpec
from rbln_artifact_studio.core.model.npu import ATOM, REBEL100, AttnImpl, Npu, NpuFamily, block_size_for
from rbln_artifact_studio.core.sizes import MIB, align_2mib

WEIGHT_KEY = "Weight"
KERNEL_KEY = "Kernel"
INTERMEDIATE_KEY = "Intermediate"
IO_KEY = "IO"

# Program (kernel) memory each compiled graph occupies on each chiplet. Calibrated: see module docstring.
KERNEL_BYTES_PER_GRAPH: dict[str, int] = {ATOM.name: 4 * MIB, REBEL100.name: 240 * MIB}

SCORE_BYTES = 4  # attention scores are kept in fp32


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class CompileShape:
    """A fully resolved compile target and shape (defaults applied, limits already validated)."""

    npu: Npu
    num_devices: int
    batch_size: int
    max_seq_len: int
    attn: AttnImpl
    partition_len: int | None
    prefill_chunk_size: int

    @property
    def family(self) -> NpuFamily:
        return self.npu.family

    @property
    def shards(self) -> int:
        return self.num_devices * self.npu.chiplets

    @property
    def block_size(self) -> int:
        return block_size_for(self.attn, self.max_seq_len, self.partition_len)

    @property
    def graph_names(self) -> list[str]:
        return ["prefill", f"decoder_batch_{self.batch_size}"]


@dataclass(frozen=True)
class _Shard:
    """Per-shard dimensions of the model."""

    heads: int
    kv_heads: int
    intermediate: int
    vocab: int


def _shard(spec: ModelSpec, shards: int) -> _Shard:
    return _Shard(
        heads=_ceil_div(spec.num_attention_heads, shards),
        kv_heads=_ceil_div(spec.kv_heads, shards),
        intermediate=_ceil_div(spec.intermediate_size, shards),
        vocab=_ceil_div(spec.vocab_size, shards),
    )


def weight_bytes_per_shard(spec: ModelSpec, shards: int) -> int:
    """Parameters one shard holds, in bytes (norms are replicated, everything else split)."""
    s = _shard(spec, shards)
    h, hd = spec.hidden_size, spec.dim_per_head
    attn = 2 * h * s.heads * hd + 2 * h * s.kv_heads * hd
    if spec.attention_bias:
        attn += s.heads * hd + 2 * s.kv_heads * hd
    mlp = 3 * h * s.intermediate
    norms = 2 * h + (2 * hd if spec.has_qk_norm else 0)
    embed = s.vocab * h
    lm_head = 0 if spec.tie_word_embeddings else s.vocab * h
    params = spec.num_hidden_layers * (attn + mlp + norms) + embed + lm_head + h
    return params * spec.dtype_bytes


def _activation_bytes(spec: ModelSpec, shape: CompileShape, tokens: int, span: int) -> int:
    """Activations of one forward step over `tokens` tokens attending to `span` positions."""
    s = _shard(spec, shape.shards)
    dt = spec.dtype_bytes
    hidden = 4 * tokens * spec.hidden_size * dt
    qkv = tokens * (s.heads + 2 * s.kv_heads) * spec.dim_per_head * dt
    mlp = 2 * tokens * s.intermediate * dt
    scores = tokens * s.heads * span * SCORE_BYTES
    return hidden + qkv + mlp + scores


def _io_bytes(spec: ModelSpec, shape: CompileShape, tokens: int, batch: int) -> int:
    s = _shard(spec, shape.shards)
    block_table = batch * (shape.max_seq_len // shape.block_size) * 2
    return tokens * 8 + block_table + batch * s.vocab * spec.dtype_bytes


def kv_tensor_bytes_per_shard(spec: ModelSpec, shape: CompileShape, layer: int, num_blocks: int) -> int:
    """One K or V tensor on one shard: resizable tensors at num_blocks, sliding ones at their fixed size."""
    s = _shard(spec, shape.shards)
    dt = spec.dtype_bytes
    if spec.layer_type(layer) == "full_attention":
        return num_blocks * s.kv_heads * shape.block_size * spec.dim_per_head * dt
    window = min(spec.sliding_window or shape.max_seq_len, shape.max_seq_len)
    return shape.batch_size * s.kv_heads * window * spec.dim_per_head * dt


def kv_tensor_names(spec: ModelSpec) -> list[tuple[str, int]]:
    """(name, layer) of every KV tensor: past_key_values_<i>, keys and values alternating."""
    return [(f"past_key_values_{2 * layer + kv}", layer) for layer in range(spec.num_hidden_layers) for kv in (0, 1)]


def resizable_names(spec: ModelSpec) -> frozenset[str]:
    return frozenset(name for name, layer in kv_tensor_names(spec) if spec.layer_type(layer) == "full_attention")


class CacheMetaEntry(TypedDict):
    """One cache_metas entry of rbln_config.json, as written."""

    name: str
    layer_index: int
    shape: list[int]
    layer_type: str
    is_auto: bool
    dtype: str


def cache_metas(spec: ModelSpec, shape: CompileShape) -> list[CacheMetaEntry]:
    """cache_metas entries as optimum-rbln records them (shape[0] is the full pool for resizable tensors)."""
    metas: list[CacheMetaEntry] = []
    full = (shape.max_seq_len // shape.block_size) * shape.batch_size
    for name, layer in kv_tensor_names(spec):
        layer_type = spec.layer_type(layer)
        if layer_type == "full_attention":
            dims = [full, spec.kv_heads, shape.block_size, spec.dim_per_head]
        else:
            window = min(spec.sliding_window or shape.max_seq_len, shape.max_seq_len)
            dims = [shape.batch_size, spec.kv_heads, window, spec.dim_per_head]
        metas.append(
            {
                "name": name,
                "layer_index": layer,
                "shape": dims,
                "layer_type": layer_type,
                "is_auto": layer_type == "full_attention",
                "dtype": spec.dtype_name,
            }
        )
    return metas


def _grid(shape: CompileShape, value: int) -> Grid:
    return [[value] * shape.npu.chiplets for _ in range(shape.num_devices)]


def simulate_graphs(spec: ModelSpec, shape: CompileShape, num_blocks: int = 1) -> dict[str, GraphAllocations]:
    """Allocation tables of every graph with the KV buffers holding num_blocks (1 right after compile)."""
    kernel = KERNEL_BYTES_PER_GRAPH[shape.family.name]
    span = shape.block_size if shape.attn is AttnImpl.FLASH else shape.max_seq_len
    kv_sizes = {
        name: _grid(shape, kv_tensor_bytes_per_shard(spec, shape, layer, num_blocks))
        for name, layer in kv_tensor_names(spec)
    }
    kv_alloc = sum(align_2mib(grid[0][0]) for grid in kv_sizes.values())
    chunk = shape.prefill_chunk_size
    prefill = {
        WEIGHT_KEY: align_2mib(weight_bytes_per_shard(spec, shape.shards)),
        KERNEL_KEY: kernel,
        INTERMEDIATE_KEY: align_2mib(_activation_bytes(spec, shape, chunk, span)),
        IO_KEY: align_2mib(_io_bytes(spec, shape, chunk, 1)),
    }
    batch = shape.batch_size
    # Decode attends over the whole sequence, one partition at a time under flash attention.
    decoder = {
        KERNEL_KEY: kernel,
        INTERMEDIATE_KEY: align_2mib(_activation_bytes(spec, shape, batch, shape.max_seq_len)),
        IO_KEY: align_2mib(_io_bytes(spec, shape, batch, batch)),
    }
    graphs = {}
    for name, allocs in zip(shape.graph_names, (prefill, decoder), strict=True):
        table = {key: _grid(shape, value) for key, value in allocs.items()}
        table[KV_KEY] = _grid(shape, kv_alloc)
        graphs[name] = GraphAllocations(table, {k: [list(r) for r in v] for k, v in kv_sizes.items()})
    return graphs


def total_weight_bytes(spec: ModelSpec, shape: CompileShape) -> int:
    """Bytes of weights across every shard: the payload a materialized prefill.rbln carries."""
    return weight_bytes_per_shard(spec, shape.shards) * shape.shards
