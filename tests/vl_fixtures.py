"""Qwen2-VL and Qwen2.5-VL artifacts laid out as optimum-rbln 0.12.0 saves them: the language model at the top
level (its KV settings and a nested `visual` section) and `visual/` with the vision encoder's own files.

Built from the decoder-only fixture optimum-rbln 0.12.0 wrote (tests/fixtures/kinds/qwen3) and the sub-config
layout its RBLNModelConfig.save gives every submodule (the LLaVA fixture's vision_tower section), with the keys
the package's config classes take (resources/optimum-rbln-configs.json); tests/optimum_loader.load_model, which
follows the package's loading rules, loads them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kind_fixtures import materialize, write_like_optimum

VL_CLASSES = {
    "qwen2_vl": ("RBLNQwen2VLForConditionalGenerationConfig", "RBLNQwen2VisionTransformerPretrainedModelConfig"),
    "qwen2_5_vl": (
        "RBLNQwen2_5_VLForConditionalGenerationConfig",
        "RBLNQwen2_5_VisionTransformerPretrainedModelConfig",
    ),
}


def _visual_section(cls_name: str, npu: str) -> dict[str, Any]:
    return {
        "cls_name": cls_name,
        "dtype": "bfloat16",
        "optimum_rbln_version": "0.12.0",
        "_compile_cfgs": [
            {
                "compiled_model_name": "compiled_model",
                "input_info": [["hidden_states", [1024, 1176], "bfloat16"]],
                "npu": npu,
                "num_devices": None,
            }
        ],
        "batch_size": 1,
        "max_seq_len": 1024,
    }


def qwen_vl(family: str, dest: Path) -> Path:
    """A Qwen2-VL (family "qwen2_vl") or Qwen2.5-VL ("qwen2_5_vl") artifact at dest, with stand-in .rbln files."""
    top_cls, visual_cls = VL_CLASSES[family]
    folder = materialize("qwen3", dest)
    raw = json.loads((folder / "rbln_config.json").read_text())
    npu = raw["_compile_cfgs"][0]["npu"]
    visual = _visual_section(visual_cls, npu)
    out: dict[str, Any] = {"cls_name": top_cls}
    out.update({k: v for k, v in raw.items() if k != "cls_name"})
    out["use_inputs_embeds"] = True
    out["visual"] = visual
    write_like_optimum(folder / "rbln_config.json", out)
    (folder / "visual").mkdir()
    write_like_optimum(folder / "visual" / "rbln_config.json", visual)
    (folder / "visual" / "compiled_model.rbln").write_bytes((folder / "prefill.rbln").read_bytes())
    return folder
