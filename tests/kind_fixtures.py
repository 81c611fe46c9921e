"""Artifacts of every model kind, from the files optimum-rbln 0.12.0 wrote (tests/fixtures/kinds, see its README).

Each fixture folder holds the JSON files byte for byte and a MANIFEST.txt listing every file the package wrote
(tools/make_kind_fixtures.py writes them with the package's own classes; tests/test_kind_fixture_generator.py
checks them); materialize() rebuilds the folder, putting a few stand-in bytes where the real compiler's .rbln files
were.
simulated_llava() swaps the LLaVA language model for a simulator compile, so the VLM can be resized here.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

KINDS = Path(__file__).parent / "fixtures" / "kinds"
REAL_GRAPH_BYTES = b"real rebel-compiler output stand-in\n"  # not our container: reads as a real compiler's .rbln

# fixture folder -> (kind as the studio names it, cls_name)
EXPECTED_KINDS = {
    "qwen3": ("decoder-only", "RBLNQwen3ForCausalLMConfig"),
    "qwen3_flash_auto": ("decoder-only", "RBLNQwen3ForCausalLMConfig"),
    "llava": ("multimodal", "RBLNLlavaForConditionalGenerationConfig"),
    "gemma3": ("multimodal", "RBLNGemma3ForConditionalGenerationConfig"),
    "idefics3": ("multimodal", "RBLNIdefics3ForConditionalGenerationConfig"),
    # the language model at the top level, its vision encoder in visual/
    "qwen2_vl": ("decoder-only", "RBLNQwen2VLForConditionalGenerationConfig"),
    "qwen2_5_vl": ("decoder-only", "RBLNQwen2_5_VLForConditionalGenerationConfig"),
    "whisper": ("encoder-decoder", "RBLNWhisperForConditionalGenerationConfig"),
    "t5": ("encoder-decoder", "RBLNT5ForConditionalGenerationConfig"),
    "bart": ("encoder-decoder", "RBLNBartForConditionalGenerationConfig"),
    "bert": ("encoder-only", "RBLNBertModelConfig"),
    "stable_diffusion": ("diffusers pipeline", "RBLNStableDiffusionPipeline"),
}
NO_KV_KINDS = ("whisper", "t5", "bart", "bert", "stable_diffusion")


def materialize(name: str, dest: Path) -> Path:
    """A copy of fixture `name` at dest with every file its MANIFEST lists (JSON as written, .rbln stand-ins)."""
    source = KINDS / name
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("MANIFEST.txt"))
    for line in (source / "MANIFEST.txt").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        rel = line.split()[0]
        target = dest / rel
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(REAL_GRAPH_BYTES if rel.endswith(".rbln") else b"")
    return dest


def write_like_optimum(path: Path, raw: dict[str, Any]) -> None:
    """rbln_config.json as optimum-rbln 0.12.0's RBLNModelConfig.save writes it (indent 2, no final newline)."""
    path.write_text(json.dumps(raw, indent=2))


def _simulated_lm(dest: Path, **compile_options: object) -> Path:
    """A tiny Llama compiled by the built-in simulator (flash, batch 2) at dest."""
    from conftest import TINY_MODEL as TINY_LM

    from rbln_artifact_studio.core.simulator.compiler import CompileRequest, plan_compile, write_artifact

    model = dest.parent / f"{dest.name}-tiny-llama"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(TINY_LM))
    options: dict[str, Any] = {
        "model_id": str(model),
        "npu": "RBLN-CA25",
        "batch_size": 2,
        "max_seq_len": 4096,
        "kvcache_partition_len": 1024,
        "attn_impl": "flash_attn",
        **compile_options,
    }
    compiled = write_artifact(plan_compile(CompileRequest(**options)), dest)
    shutil.rmtree(model)
    return compiled


def simulated_llava(dest: Path, **compile_options: object) -> Path:
    """The LLaVA fixture with its language model compiled by the built-in simulator (tiny Llama, flash).

    The language_model/ subfolder and the parent's nested section hold the same config, as optimum-rbln writes
    them; the vision tower and projector keep the real-compiler stand-ins.
    """
    folder = materialize("llava", dest)
    compiled = _simulated_lm(dest.parent / f"{dest.name}-lm", **compile_options)
    shutil.rmtree(folder / "language_model")
    shutil.move(str(compiled), folder / "language_model")
    lm = json.loads((folder / "language_model" / "rbln_config.json").read_text())
    write_like_optimum(folder / "language_model" / "rbln_config.json", lm)
    parent = json.loads((folder / "rbln_config.json").read_text())
    parent["language_model"] = lm
    write_like_optimum(folder / "rbln_config.json", parent)
    return folder


def simulated_qwen_vl(family: str, dest: Path, **compile_options: object) -> Path:
    """The Qwen2-VL ("qwen2_vl") or Qwen2.5-VL ("qwen2_5_vl") fixture with its language model, the top level,
    compiled by the built-in simulator (tiny Llama, flash); visual/ keeps the real-compiler stand-in."""
    folder = materialize(family, dest)
    written = json.loads((folder / "rbln_config.json").read_text())
    for graph in folder.glob("*.rbln"):
        graph.unlink()
    compiled = _simulated_lm(dest.parent / f"{dest.name}-lm", **compile_options)
    for path in compiled.iterdir():
        if path.suffix == ".rbln" or path.name == "rbln_config.json":
            shutil.move(str(path), folder / path.name)
    shutil.rmtree(compiled)
    lm = json.loads((folder / "rbln_config.json").read_text())
    lm.update(cls_name=written["cls_name"], use_inputs_embeds=True, visual=written["visual"])
    write_like_optimum(folder / "rbln_config.json", lm)
    return folder
