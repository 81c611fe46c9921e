"""The scan's lean readers (rbln_config.read_view, container._lean_header) agree with the pydantic models on valid
and invalid documents, and a cold scan reads every verdict without importing pydantic (issue 35, item 2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from rbln_artifact_studio.core.model.config_checks import expected_graph_names
from rbln_artifact_studio.core.model.config_fields import ConfigFields
from rbln_artifact_studio.core.model.config_model import RblnConfig
from rbln_artifact_studio.core.model.config_reader import VIEW_FIELDS
from rbln_artifact_studio.core.model.kinds import kind_of, upstream_problems
from rbln_artifact_studio.core.model.rbln_config import read_view
from rbln_artifact_studio.core.simulator.container import HEADER_FIELDS, GraphHeader, _lean_header
from rbln_artifact_studio.core.simulator.header_model import HeaderModel

APP = Path(__file__).resolve().parents[1] / "app"

# ---- rbln_config.json ---------------------------------------------------------------------------------------------

BASE: dict[str, Any] = {
    "cls_name": "RBLNQwen3ForCausalLMConfig",
    "dtype": "bfloat16",
    "_compile_cfgs": [
        {"compiled_model_name": "prefill", "npu": "RBLN-CR13", "num_devices": 1, "input_info": [["x", [1, 8], "i"]]},
        {"compiled_model_name": "decoder_batch_8", "npu": "RBLN-CR13", "num_devices": 1},
    ],
    "batch_size": 8,
    "max_seq_len": 40960,
    "attn_impl": "flash_attn",
    "kvcache_partition_len": 8192,
    "kvcache_block_size": 8192,
    "prefill_chunk_size": 128,
    "kvcache_num_blocks": 21,
    "decoder_batch_sizes": [8],
    "cache_metas": [
        {"name": f"past_key_values_{i}", "layer_index": i // 2, "shape": [40, 8, 8192, 128]}
        | ({"layer_type": "full_attention", "is_auto": True, "dtype": "bfloat16"} if i % 2 else {})
        for i in range(4)
    ],
    "npu": "RBLN-CR13",
    "num_devices": 1,
    "use_inputs_embeds": False,
}
TOP_KEYS = [*BASE, "tensor_parallel_size", "kvcache_metas", "_meta", "compile_cfgs", "legacy_meta", "other"]
META_KEYS = ["name", "layer_index", "shape", "layer_type", "is_auto", "dtype", "extra"]
CFG_KEYS = ["compiled_model_name", "npu", "num_devices", "tensor_parallel_size"]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=70_000),
    st.sampled_from([0, 1, 8, 9, 21, 8192, 40960, 1 << 16, (1 << 16) + 1, 1 << 20, (1 << 20) + 1, 1 << 40]),
    st.sampled_from([(1 << 40) + 1, -(1 << 40), -(1 << 40) - 1, 10**30]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["eager", "flash_attn", "paged", "RBLN-CR13", "RBLN-CA25", "bfloat16", "torch.float16", "fp8"]),
    st.sampled_from(["sliding_attention", "full_attention", "mystery", "prefill", "x", ""]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=10,
)
SHAPES = st.lists(st.sampled_from([-1, 0, 1, 8, 128, 8192, 1 << 40, (1 << 40) + 1, True]), min_size=3, max_size=5)
EDITS = st.one_of(
    st.tuples(st.just("set"), st.sampled_from(TOP_KEYS), VALUES),
    st.tuples(st.just("delete"), st.sampled_from(TOP_KEYS), st.none()),
    st.tuples(st.just("meta"), st.sampled_from(META_KEYS), st.one_of(VALUES, SHAPES)),
    st.tuples(st.just("meta-delete"), st.sampled_from(META_KEYS), st.none()),
    st.tuples(st.just("cfg0"), st.sampled_from(CFG_KEYS), VALUES),
    st.tuples(st.just("cfg0-delete"), st.sampled_from(CFG_KEYS), st.none()),
)


def edited(edits: list[tuple[str, str, object]]) -> dict[str, Any]:
    raw: dict[str, Any] = json.loads(json.dumps(BASE))
    for kind, key, value in edits:
        metas, cfgs = raw.get("cache_metas"), raw.get("_compile_cfgs")
        meta = metas[-1] if isinstance(metas, list) and metas and isinstance(metas[-1], dict) else None
        cfg0 = cfgs[0] if isinstance(cfgs, list) and cfgs and isinstance(cfgs[0], dict) else None
        target = {"set": raw, "delete": raw, "meta": meta, "meta-delete": meta, "cfg0": cfg0, "cfg0-delete": cfg0}[kind]
        if target is None:
            continue
        if kind.endswith("delete"):
            target.pop(key, None)
        else:
            target[key] = value
    return raw


def figures(config: ConfigFields) -> dict[str, object]:
    """Every field and every figure a row, inspect or a resize reads from the config."""
    names = ["cls_name", "batch_size", "max_seq_len", "kvcache_num_blocks", "kvcache_block_size"]
    names += ["kvcache_partition_len", "attn_impl", "npu", "num_devices", "prefill_chunk_size", "dtype"]
    names += ["decoder_batch_sizes", "attn", "block_size", "num_full_blocks", "num_min_blocks", "unknown_cache_kinds"]
    names += ["kv_unknown_reason", "kv_bytes_per_block", "kv_fixed_bytes", "kv_fixed_reason", "resizable_names"]
    out: dict[str, object] = {name: getattr(config, name) for name in names}
    out["kv_heads"] = config.kv_heads
    out["kv_bytes_per_npu"] = config.kv_bytes_per_npu(config.kvcache_num_blocks)
    return out


def plainly_current(raw: dict[str, Any]) -> bool:
    """No older key names, and _compile_cfgs absent, null or a list of objects: what the lean reader takes on."""
    cfgs = raw.get("_compile_cfgs")
    older = {"tensor_parallel_size", "kvcache_metas", "_meta", "legacy_meta"} & raw.keys()  # the last: the field's name
    if cfgs is None:
        return not older
    if not isinstance(cfgs, list) or not all(isinstance(c, dict) for c in cfgs):
        return False
    return not older and not (cfgs and "tensor_parallel_size" in cfgs[0])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits=st.lists(EDITS, max_size=4))
def test_the_lean_config_reader_agrees_with_the_model(edits: list[tuple[str, str, object]]) -> None:
    """Never a figure the model would not give: a file the model refuses, the lean reader leaves to it; one both
    take gives the same fields and figures; and every plainly current file the model takes, the lean reader takes."""
    raw = edited(edits)
    data = json.dumps(raw).encode()
    lean = read_view(data)
    try:
        model: RblnConfig | None = RblnConfig.model_validate(raw)
    except ValidationError:
        model = None
    if model is None:
        assert lean is None
        return
    if lean is None:
        assert not plainly_current(raw)
        return
    assert figures(lean) == figures(model)
    assert lean.expected_graph_names == expected_graph_names(raw)
    stand_in = lean.top_level_stand_in()  # what tells a row's kind and the loader's refusals, without the raw file
    assert (kind_of(stand_in), upstream_problems(stand_in)) == (kind_of(raw), upstream_problems(raw))


def test_the_base_document_is_read_by_both() -> None:
    """The property test starts from a document both readers take (it is not vacuous)."""
    lean = read_view(json.dumps(BASE).encode())
    assert lean is not None
    assert figures(lean) == figures(RblnConfig.model_validate(BASE))
    assert lean.kv_bytes_per_block == 4 * 8 * 8192 * 128 * 2


def test_the_lean_reader_reads_every_field_of_the_model() -> None:
    """Every field the model validates, the reader checks (and the older names that send a file to the model)."""
    older = {"compile_cfgs", "tensor_parallel_size", "kvcache_metas", "legacy_meta"}
    assert set(RblnConfig.model_fields) | older == VIEW_FIELDS


# ---- container headers ---------------------------------------------------------------------------------------------

HEADER: dict[str, Any] = {
    "graph": "prefill",
    "npu": "RBLN-CA25",
    "num_devices": 1,
    "chiplets": 1,
    "kvcache_num_blocks": 5,
    "compiled_kvcache_num_blocks": 5,
    "weights_bytes": 1 << 20,
    "resizable": ["t0"],
    "alloc_per_chiplet_by_key": {"Weight": [[1 << 20]], "DramTensor": [[5 << 21]]},
    "dram_tensor_sizes": {"t0": [[5 << 21]]},
}
HEADER_EDITS = st.one_of(
    st.tuples(st.sampled_from([*HEADER_FIELDS, "extra"]), VALUES),
    st.tuples(st.sampled_from(HEADER_FIELDS), st.just("<delete>")),
    st.tuples(st.just("<grid>"), st.lists(st.lists(st.one_of(SCALARS, VALUES), max_size=3), max_size=3)),
)


@settings(max_examples=300, deadline=None)
@given(edits=st.lists(HEADER_EDITS, max_size=3))
def test_the_lean_header_reader_agrees_with_the_model(edits: list[tuple[str, object]]) -> None:
    """The scan's header reader gives the model's header, or leaves the body to the model: never another one."""
    body: dict[str, Any] = json.loads(json.dumps(HEADER))
    for key, value in edits:
        if key == "<grid>":
            body["dram_tensor_sizes"] = {"t0": value}
        elif value == "<delete>":
            body.pop(key, None)
        else:
            body[key] = value
    data = json.dumps(body).encode()
    try:
        expected: GraphHeader | None = GraphHeader.model_validate_json(data)
    except ValidationError:
        expected = None
    lean = _lean_header(data)
    if expected is None:
        assert lean is None
    else:
        assert lean == expected  # every valid header is plainly valid: the scan never needs the model


def test_a_header_made_by_the_compiler_is_validated_and_round_trips() -> None:
    """What is written is checked by the model; what is read back equals it, field by field."""
    header = GraphHeader(**HEADER)
    assert _lean_header(header.model_dump_json().encode()) == header
    assert header.model_dump() == HeaderModel(**HEADER).model_dump()
    with pytest.raises(ValidationError):
        GraphHeader(**{**HEADER, "num_devices": 0})


# ---- what a scan imports ---------------------------------------------------------------------------------------------


def test_a_cold_scan_reads_every_verdict_without_pydantic(cr13_artifact: Path, tmp_path: Path) -> None:
    """The full check reads rbln_config.json, config.json and the container headers with the lean readers: a scan
    of valid artifacts imports neither pydantic (its models, plugin lookup and schema builds: ~0.1 s of CPU a
    process) nor what only a cache or a lock needs (hashlib, platformdirs, socket)."""
    code = (
        "import sys; from rbln_artifact_studio.cli.main import main; "
        f"main(['scan', {str(cr13_artifact.parent)!r}, '--json', '--no-cache', '--jobs', '1']); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'hashlib', 'platformdirs', 'socket')))"
    )
    env = {**os.environ, "PYTHONPATH": str(APP), "RBLN_STUDIO_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.splitlines()[-1] == "[]"
    report = json.loads("\n".join(out.stdout.splitlines()[:-1]))
    assert [(row["name"], row["status"], row["kvcache_num_blocks"]) for row in report] == [("qwen3-8b-cr13", "ok", 21)]


def test_copies_of_a_model_share_one_reading_of_their_cache_metas() -> None:
    """The same cache_metas bytes (a model's copies at other block counts) are decoded and summed once; other
    bytes are read anew, never given another file's tensors."""
    copies = [read_view(json.dumps({**BASE, "kvcache_num_blocks": n}).encode()) for n in (9, 21, 40)]
    assert all(c is not None for c in copies)
    first = copies[0]
    assert first is not None and all(c is not None and c.cache_metas is first.cache_metas for c in copies)
    assert [c.kvcache_num_blocks for c in copies if c is not None] == [9, 21, 40]
    halved = [{**m, "shape": [40, 4, 8192, 128]} for m in BASE["cache_metas"]]
    other = read_view(json.dumps({**BASE, "cache_metas": halved}).encode())
    assert other is not None and other.cache_metas is not first.cache_metas
    assert (first.kv_bytes_per_block, other.kv_bytes_per_block) == (4 * 8 * 8192 * 128 * 2, 4 * 4 * 8192 * 128 * 2)
