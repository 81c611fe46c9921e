"""Write the model-kind fixtures (tests/fixtures/kinds/NAME) with optimum-rbln 0.12.0's own code, its CLI main().

Usage, in a throwaway virtual environment (never the studio's own):
    python3 -m venv /tmp/orbln-venv
    /tmp/orbln-venv/bin/pip install torch==2.13.0 transformers==5.15.1 diffusers==0.38.0 tokenizers==0.22.1 accelerate
    /tmp/orbln-venv/bin/pip install --no-deps optimum-rbln==0.12.0
    HF_HUB_OFFLINE=1 /tmp/orbln-venv/bin/python tools/make_kind_fixtures.py tests/fixtures/kinds [NAME ...]
(optimum-rbln 0.12.0 pins torchaudio, torchvision and torchcodec +cpu builds that PyPI does not serve and that
writing configs does not need, hence --no-deps.)
The same environment runs tests/test_optimum_loader.py's real loader once the stub is importable there too:
    /tmp/orbln-venv/bin/python tools/make_kind_fixtures.py --stub-rebel-into \
        "$(/tmp/orbln-venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
tests/test_kind_fixture_generator.py runs it into a temporary folder and compares every file, when
RBLN_STUDIO_OPTIMUM_PYTHON names such a Python.

rebel-compiler, Rebellions' compiler, is not on PyPI, and optimum.rbln imports it at its first import. A stub takes
its place in sys.modules, and only that stub is not the real package: `rebel.compile_from_torch` / `rebel.compile`
return a compiled model whose `save()` writes an empty file (the graph is never traced or compiled), the device
queries say no NPU is present, `rebel.compile_context.CompileContext` records nothing, and the `rbln_custom_ops`
torch operators rebel registers (linear, paged_causal_attn_decode, ...) are placeholders that are never run. Every
config is built, filled and saved by optimum-rbln's own classes (RBLN...Config, RBLNModelConfig.save).

Each fixture's source model is a tiny random model built from the fixture's committed configs (no JSON depends
on the weights), or from TINY below for a family that has none yet. The JSON files are kept byte for byte; the
.rbln and .pth files (empty in this run) and the tokenizer files are only listed in MANIFEST.txt, and
tests/kind_fixtures.py recreates them. Not regenerated here: qwen3_flash_auto and qwen3_flash_auto_after_cli_set_3
(their counts come from the allocation tables of a compiler, which this stub does not report).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

DEFAULT_SOURCE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "kinds"
NPU = ["--npu", "RBLN-CA25"]
# fixture -> the optimum-rbln-cli options it was compiled with
FIXTURES: dict[str, list[str]] = {
    "qwen3": ["--batch_size", "1", "--max_seq_len", "8192", *NPU],
    "llava": [*NPU, "--language_model.max_seq_len", "4096", "--language_model.use_inputs_embeds", "true"],
    "qwen2_vl": [*NPU, "--max_seq_len", "8192", "--visual.max_seq_len", "6400"],
    "qwen2_5_vl": [*NPU, "--max_seq_len", "8192", "--visual.max_seq_len", "6400"],
    "idefics3": [*NPU, "--text_model.max_seq_len", "8192"],
    "gemma3": [*NPU, "--language_model.max_seq_len", "8192"],
    "whisper": [*NPU, "--batch_size", "1"],
    "t5": [*NPU, "--enc_max_seq_len", "512", "--dec_max_seq_len", "512"],
    "bart": NPU,
    "bert": [*NPU, "--max_seq_len", "512"],
    "stable_diffusion": [*NPU, "--height", "512", "--width", "512"],
}
# the model id a fixture's files record (model_index.json keeps it as _name_or_path); others record none
MODEL_IDS = {"stable_diffusion": "hf/sd"}
KEPT = ("rbln_config.json", "config.json", "generation_config.json", "model_index.json", "scheduler_config.json")
_TEXT = {"vocab_size": 1024, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2}
_TEXT.update(num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=8192)
_MROPE = {"type": "mrope", "mrope_section": [2, 2, 4]}
_QWEN_VISION = {"depth": 2, "in_channels": 3, "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2}
_QWEN_VISION["spatial_patch_size"] = 14  # the published Qwen2-VL configs carry it, and optimum-rbln reads it
_VISION = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2}
# family -> (transformers config class, model class, config keywords): the tiny models of families new here
TINY: dict[str, tuple[str, str, dict[str, Any]]] = {
    "qwen2_vl": (
        "Qwen2VLConfig",
        "Qwen2VLForConditionalGeneration",
        {
            "text_config": {**_TEXT, "rope_scaling": _MROPE},
            "vision_config": {**_QWEN_VISION, "embed_dim": 32, "hidden_size": 64, "num_heads": 2, "mlp_ratio": 2},
        },
    ),
    "qwen2_5_vl": (
        "Qwen2_5_VLConfig",
        "Qwen2_5_VLForConditionalGeneration",
        {
            "text_config": {**_TEXT, "rope_scaling": _MROPE},
            "vision_config": {
                **_QWEN_VISION,
                "hidden_size": 32,
                "intermediate_size": 64,
                "num_heads": 2,
                "out_hidden_size": 64,
                "window_size": 112,
                "fullatt_block_indexes": [1],
            },
        },
    ),
    "idefics3": (
        "Idefics3Config",
        "Idefics3ForConditionalGeneration",
        {
            "text_config": {**_TEXT, "model_type": "llama"},
            "vision_config": {**_VISION, "image_size": 364, "patch_size": 14},
            "scale_factor": 2,
            "image_token_id": 1000,
        },
    ),
    "gemma3": (
        "Gemma3Config",
        "Gemma3ForConditionalGeneration",
        {
            "text_config": {
                **_TEXT,
                "head_dim": 16,
                "sliding_window": 512,
                "layer_types": ["sliding_attention", "full_attention"],
            },
            "vision_config": {**_VISION, "image_size": 224, "patch_size": 14},
            "mm_tokens_per_image": 256,  # one image prefill chunk: optimum-rbln needs it equal to the text's
            "image_token_index": 1000,
            "boi_token_index": 1001,
            "eoi_token_index": 1002,
        },
    ),
}
HEADER = """\
# Files optimum-rbln 0.12.0 wrote into this artifact folder (relative paths).
# Written by tools/make_kind_fixtures.py: optimum-rbln 0.12.0's own code (CLI main) with a stub `rebel` (see there):
#   optimum-rbln-cli --model-id {model_id} --output-dir {name} {options}
# Source model: {model_id}, tiny and random, built from this folder's configs: shapes/vocab are tiny; key set/order/format are real.
# [binary, not included] = .rbln (0-byte in the stub run; real ones are compiler output) or torch_artifacts.pth.
# [preprocessor] = tokenizer/processor files the run wrote (not included).
"""


# The stub, as the source of a module named rebel (--stub-rebel-into writes it as a package).
STUB_REBEL = '''"""A stand-in for rebel-compiler, written by tools/make_kind_fixtures.py: it never compiles (see there)."""

import sys
import types
from pathlib import Path

import torch

__version__ = "0.0.0+stub"


class Runtime:
    pass


class RBLNCompiledModel:
    def __init__(self, path=None):
        self.path = path

    def save(self, path):
        Path(str(path)).write_bytes(b"")


def compile(model=None, input_info=None, npu=None, num_devices=None, **kwargs):
    return RBLNCompiledModel()


def compile_from_torch(model, input_info=None, npu=None, **kwargs):
    return RBLNCompiledModel()


def get_npu_name(device=0):
    return None


def npu_is_available(device=0):
    return False


def device_count():
    return 0


class CompileContext:
    def __init__(self, **kwargs):
        pass

    def mark_static_address(self, tensor, name=None):
        pass


compile_context = types.ModuleType(__name__ + ".compile_context")
compile_context.CompileContext = CompileContext
sys.modules[compile_context.__name__] = compile_context

_ops = torch.ops.rbln_custom_ops


class _Placeholders(type(_ops)):
    """rebel registers these torch operators (linear, paged_causal_attn_decode, ...); here they are never run."""

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name.startswith("__"):
                raise

            def op(*args, **kwargs):
                raise RuntimeError("rbln_custom_ops.%s is rebel-compiler's; the stub never runs it" % name)

            return op


_ops.__class__ = _Placeholders
'''


def install_stub_rebel() -> None:
    """rebel-compiler's interface as optimum-rbln 0.12.0 uses it while compiling, doing nothing (see the top)."""
    module = types.ModuleType("rebel")
    sys.modules["rebel"] = module
    exec(compile(STUB_REBEL, "<stub rebel>", "exec"), module.__dict__)


def build_pipeline(committed: Path, dest: Path) -> None:
    """A tiny random Stable Diffusion pipeline from the committed components' configs, with a four-word CLIP
    vocabulary (the fixture keeps no tokenizer; no JSON kept depends on its words)."""
    import diffusers
    import transformers

    text_encoder = transformers.CLIPTextModel(transformers.CLIPTextConfig.from_pretrained(committed / "text_encoder"))
    unet = diffusers.UNet2DConditionModel.from_config(diffusers.UNet2DConditionModel.load_config(committed / "unet"))
    vae = diffusers.AutoencoderKL.from_config(diffusers.AutoencoderKL.load_config(committed / "vae"))
    scheduler = diffusers.PNDMScheduler.from_config(diffusers.PNDMScheduler.load_config(committed / "scheduler"))
    words = dest.parent / "clip-words"
    words.mkdir(parents=True)
    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1, "a</w>": 2, "b</w>": 3}
    (words / "vocab.json").write_text(json.dumps(vocab))
    (words / "merges.txt").write_text("#version: 0.2\n")
    tokenizer = transformers.CLIPTokenizer(
        vocab_file=str(words / "vocab.json"), merges_file=str(words / "merges.txt"), model_max_length=77
    )
    pipeline = diffusers.StableDiffusionPipeline(
        vae=vae,
        text_encoder=text_encoder,
        tokenizer=tokenizer,
        unet=unet,
        scheduler=scheduler,
        safety_checker=None,
        feature_extractor=None,
        requires_safety_checker=False,
    )
    pipeline.save_pretrained(dest)


def build_model(name: str, source: Path, dest: Path) -> None:
    """The tiny random source model of fixture `name`, saved at dest (a pipeline: its components)."""
    import torch
    import transformers

    torch.manual_seed(0)
    if (source / name / "model_index.json").is_file():
        build_pipeline(source / name, dest)
        return
    committed = source / name / "config.json"
    if committed.is_file():
        config = transformers.AutoConfig.from_pretrained(committed.parent)
        model_cls = getattr(transformers, config.architectures[0])
    else:
        config_cls, model_name, kwargs = TINY[name]
        config = getattr(transformers, config_cls)(**kwargs, dtype="bfloat16")
        model_cls = getattr(transformers, model_name)
    model = model_cls(config)
    dtype = getattr(config, "dtype", None)  # as the published checkpoints are saved (bfloat16)
    if isinstance(dtype, str):
        dtype = getattr(torch, dtype.removeprefix("torch."))
    if dtype is not None:
        model = model.to(dtype)
    model.save_pretrained(dest)


def compile_one(name: str, source: Path, out: Path) -> None:
    """One fixture, in this process: the source model, then optimum-rbln's CLI main on it."""
    install_stub_rebel()
    from optimum.rbln.cli import main as cli_main

    with tempfile.TemporaryDirectory() as tmp:
        model_id = MODEL_IDS.get(name, f"hf/{name}")
        build_model(name, source.resolve(), Path(tmp) / model_id)
        os.chdir(tmp)  # the model id relative, as the files record it
        sys.argv = ["optimum-rbln-cli", "--model-id", model_id, "--output-dir", str(out.resolve()), *FIXTURES[name]]
        status = cli_main()
    written = (out / "rbln_config.json").is_file() or (out / "model_index.json").is_file()
    if status not in (0, None) or not written:  # the CLI reports a failed compile and may still return
        raise SystemExit(f"optimum-rbln-cli failed on {name} (status {status})")


def _note(rel: str) -> str:
    if rel.endswith((".rbln", ".pth")):
        return f"{rel}  [binary, not included]"
    return rel if rel.rsplit("/", 1)[-1] in KEPT else f"{rel}  [preprocessor]"


def keep(name: str, run: Path, dest: Path) -> None:
    """The run's JSON files at dest/name byte for byte, and MANIFEST.txt listing every file it wrote."""
    rels = sorted(p.relative_to(run).as_posix() for p in run.rglob("*") if p.is_file())
    folder = dest / name
    if folder.exists():
        shutil.rmtree(folder)  # nothing of an earlier run left behind
    folder.mkdir(parents=True)
    for rel in rels:
        if rel.rsplit("/", 1)[-1] in KEPT:
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_bytes((run / rel).read_bytes())
    header = HEADER.format(name=name, model_id=MODEL_IDS.get(name, f"hf/{name}"), options=" ".join(FIXTURES[name]))
    (folder / "MANIFEST.txt").write_text(header + "".join(_note(rel) + "\n" for rel in rels))


def main(argv: list[str]) -> int:
    if argv[:1] == ["--compile-one"]:  # the child process of one fixture
        compile_one(argv[1], Path(argv[2]), Path(argv[3]))
        return 0
    if argv[:1] == ["--stub-rebel-into"] and len(argv) == 2:  # for tests/test_optimum_loader.py's real loader
        package = Path(argv[1]) / "rebel"
        package.mkdir(parents=True, exist_ok=True)
        (package / "__init__.py").write_text(STUB_REBEL)
        print(f"wrote {package}", file=sys.stderr)
        return 0
    if not argv or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    dest, names = Path(argv[0]), argv[1:] or list(FIXTURES)
    source = DEFAULT_SOURCE
    for name in names:
        if name not in FIXTURES:
            print(f"unknown fixture {name}; known: {', '.join(FIXTURES)}", file=sys.stderr)
            return 2
        with tempfile.TemporaryDirectory() as tmp:
            run = Path(tmp) / name
            # each compile in its own process: optimum-rbln keeps per-process state between models
            done = subprocess.run([sys.executable, __file__, "--compile-one", name, str(source), str(run)], check=False)
            if done.returncode != 0:
                print(f"{name}: failed (status {done.returncode})", file=sys.stderr)
                return 1
            keep(name, run, dest)
        print(f"wrote {dest / name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
