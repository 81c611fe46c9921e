"""A fake optimum-rbln-cli, written from the published behaviour of optimum-rbln's command line.

What it shares with the real one: `--model-id` (required), `-o/--output-dir` (default ./rbln_out), any other
`--key value` collected into rbln_config (dashes become underscores; values parsed as JSON, bool, list, int,
float, then string), `--version` ("optimum-rbln-cli X"), `--get-kvcache-num-blocks`,
`--set-kvcache-num-blocks N`, `--set-memory-budget B` (exclusive, exit 2), an `--output-dir` honoured by the
set operations only when given explicitly, "❌ Error during model compilation: …" / "❌ Error: …" on stderr
with exit 1, the artifact layout (rbln_config.json with npu and num_devices only inside _compile_cfgs;
prefill.rbln and decoder_batch_N.rbln) and the KV block estimation of DESIGN section 5.

It compiles local model folders (config.json) only. Knobs, from the environment:
  FAKE_OPTIMUM_DELAY=s      pause s seconds between steps (a slow compile or copy)
  FAKE_OPTIMUM_FAIL=text    after the first graph is written, print "❌ Error: text" and exit 1
  FAKE_OPTIMUM_HANG=1       after the first graph, start a child worker (same process group), then hang
  FAKE_OPTIMUM_IGNORE_TERM=1  the hanging processes ignore SIGTERM (only SIGKILL ends them)
  FAKE_OPTIMUM_PIDFILE=path   where the hanging run writes "leader_pid worker_pid"
  FAKE_OPTIMUM_GATE=path    after the first lines, wait (up to 30 s) until this file exists
  FAKE_OPTIMUM_ARGV_LOG=path  append this run's argv as a JSON line
  FAKE_OPTIMUM_VERSION=v    the version --version prints (default 0.12.0)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import rebel  # the real CLI imports rebel-compiler at start-up too

GIB = 1 << 30
MIB = 1 << 20
FAMILIES = {
    # prefix: (DRAM, chiplets, reserve per chiplet, eager max_seq_len, default partition, default prefill chunk)
    "RBLN-CA": (16 * GIB, 1, 288 * MIB, 32_768, 16_384, 128),
    "RBLN-CR": (144 * GIB, 4, 1 * GIB, 16_384, 8_192, 512),
}
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}
UNITS = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}


def say(text: str, err: bool = False) -> None:
    print(text, file=sys.stderr if err else sys.stdout, flush=True)


def pause() -> None:
    delay = float(os.environ.get("FAKE_OPTIMUM_DELAY", "0") or 0)
    if delay:
        time.sleep(delay)


def family(npu: str) -> tuple[int, int, int, int, int, int]:
    for prefix, figures in FAMILIES.items():
        if npu.upper().startswith(prefix):
            return figures
    raise ValueError(f"Unknown npu name: {npu}")


def available_per_chiplet(npu: str) -> tuple[int, int]:
    dram, chiplets, reserve, *_ = family(npu)
    return dram // chiplets - reserve, chiplets


# ---- values and budgets ---------------------------------------------------------------------------------


def parse_single_value(text: str) -> object:
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if text.isdigit() or (text.startswith("-") and text[1:].isdigit()):
        return int(text)
    try:
        return float(text)
    except ValueError:
        return text


def parse_value(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if "," in text:
        return [parse_single_value(part.strip()) for part in text.split(",")]
    return parse_single_value(text)


def budget_per_chiplet(value: object, npu: str) -> int:
    per_chiplet, chiplets = available_per_chiplet(npu)
    total = per_chiplet * chiplets
    if value is None:
        return per_chiplet
    if isinstance(value, str) and value.strip().endswith("%"):
        value = float(value.strip()[:-1]) / 100
        shown = f"{value * 100:g}%"
    else:
        shown = str(value)
    if isinstance(value, float):
        if not 0 < value <= 1:
            raise ValueError(f"memory_budget fraction must be in (0, 1] (or (0%, 100%]), got {shown}.")
        budget = int(total * value)
    elif isinstance(value, int):
        budget = value
    else:
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*", str(value).upper())
        if not match:
            raise ValueError(f"Cannot parse memory_budget {value!r}.")
        unit = match.group(2) + "B" if match.group(2) else "B"
        budget = int(float(match.group(1)) * UNITS[unit])
    if budget > total:
        raise ValueError(f"memory_budget ({budget} bytes) exceeds the target NPU's available DRAM ({total} bytes).")
    return budget // chiplets


# ---- estimation (DESIGN section 5) ------------------------------------------------------------------------


def align_2mib(n: int) -> int:
    return rebel.align_2mib(n)


def estimate(models: dict, resizable: set, current: int, budget: int, full: int) -> int:
    non_kv: dict = {}
    for model in models.values():
        for key, grid in model.get_alloc_per_chiplet_by_key().items():
            if key == rebel.KV_KEY:
                continue
            for n, row in enumerate(grid):
                for c, size in enumerate(row):
                    non_kv[(n, c)] = non_kv.get((n, c), 0) + size
    sizes = models["prefill"].exp_get_dram_tensor_sizes()

    def fits(blocks: int) -> bool:
        for (n, c), used in non_kv.items():
            kv = sum(
                align_2mib(grid[n][c] // current * blocks) if name in resizable else align_2mib(grid[n][c])
                for name, grid in sizes.items()
            )
            if kv > budget - used:
                return False
        return True

    if fits(full):
        return full
    lo, hi, best = 1, full - 1, 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if fits(mid):
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    return best


def floor_and_full(config: dict) -> tuple[int, int]:
    per_seq = config["max_seq_len"] // config["kvcache_block_size"]
    full = per_seq * config["batch_size"]
    if config["attn_impl"] == "eager":
        return config["batch_size"], full
    return min(max(per_seq, config["batch_size"]) + 1, full), full


def insufficient(fit: int, floor: int, batch: int) -> str:
    return (
        f"Insufficient memory for the required KV cache: only {fit} blocks can be allocated, but at least {floor} "
        f"blocks are required. Consider reducing `max_seq_len` or `batch_size` (currently {batch}) to lower the "
        "memory requirement."
    )


# ---- knobs ----------------------------------------------------------------------------------------------


def wait_for_gate() -> None:
    gate = os.environ.get("FAKE_OPTIMUM_GATE")
    if not gate:
        return
    deadline = time.monotonic() + 30
    while not os.path.exists(gate):
        if time.monotonic() > deadline:
            raise RuntimeError("the gate file never appeared: was the output not streamed?")
        time.sleep(0.01)


def fail_or_hang() -> None:
    if os.environ.get("FAKE_OPTIMUM_FAIL"):
        say(f"❌ Error: {os.environ['FAKE_OPTIMUM_FAIL']}", err=True)
        sys.exit(1)
    if not os.environ.get("FAKE_OPTIMUM_HANG"):
        return
    ignore = bool(os.environ.get("FAKE_OPTIMUM_IGNORE_TERM"))
    if ignore:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    code = "import signal, time\n"
    if ignore:
        code += "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    code += "while True: time.sleep(3600)\n"
    worker = subprocess.Popen([sys.executable, "-c", code])  # same process group, inherits our pipes
    pidfile = os.environ.get("FAKE_OPTIMUM_PIDFILE")
    if pidfile:
        Path(pidfile + ".tmp").write_text(f"{os.getpid()} {worker.pid}")
        os.replace(pidfile + ".tmp", pidfile)
    say(f"compiler workers started (pid {worker.pid}); waiting for them")
    while True:
        time.sleep(3600)


# ---- compile --------------------------------------------------------------------------------------------


def shard_grid(total: int, nodes: int, chiplets: int) -> list:
    return [[total // (nodes * chiplets)] * chiplets for _ in range(nodes)]


def compile_model(model_id: str, output: Path, options: dict) -> None:
    source = Path(model_id)
    if not (source / "config.json").is_file():
        raise ValueError(f"fake optimum-rbln-cli compiles local model folders only; no config.json in {model_id!r}")
    hf = json.loads((source / "config.json").read_text())
    arch = hf["architectures"][0]
    npu = options.get("npu", "RBLN-CA25")
    _, chiplets, _, eager_max, partition_default, chunk_default = family(npu)
    devices = int(options.get("num_devices", options.get("tensor_parallel_size", 1)))
    batch = int(options.get("batch_size", 1))
    max_seq_len = int(options.get("max_seq_len", hf.get("max_position_embeddings", 4096)))
    partition = options.get("kvcache_partition_len")
    attn = options.get("attn_impl") or ("flash_attn" if partition or max_seq_len > eager_max else "eager")
    if attn == "flash_attn":
        partition = int(partition or partition_default)
        if max_seq_len % partition or max_seq_len < 2 * partition:
            raise ValueError("max_seq_len must be a multiple of kvcache_partition_len with at least two partitions")
    else:
        partition = None
    block = partition or max_seq_len
    chunk = int(options.get("prefill_chunk_size", chunk_default))
    explicit = int(options.get("kvcache_num_blocks", 0) or 0)
    memory_budget = options.get("memory_budget")
    dtype = str(hf.get("torch_dtype", "float32")).removeprefix("torch.")
    nbytes = DTYPE_BYTES.get(dtype, 4)
    layers, hidden = hf["num_hidden_layers"], hf["hidden_size"]
    heads = hf["num_attention_heads"]
    kv_heads = hf.get("num_key_value_heads") or heads
    head_dim = hf.get("head_dim") or hidden // heads
    params = layers * (
        2 * hidden * heads * head_dim + 2 * hidden * kv_heads * head_dim + 3 * hidden * hf["intermediate_size"]
    )
    params += hf["vocab_size"] * hidden * (1 if hf.get("tie_word_embeddings") else 2)

    config = {"max_seq_len": max_seq_len, "kvcache_block_size": block, "batch_size": batch, "attn_impl": attn}
    floor, full = floor_and_full(config)
    if explicit and explicit < floor:
        raise ValueError(
            f"The set `kvcache_num_blocks` ({explicit}) is less than the minimum number of blocks ({floor})."
        )
    if explicit > full:
        say(
            f"WARNING: The set `kvcache_num_blocks` ({explicit}) is greater than the required number of blocks ({full}).",
            err=True,
        )

    names = [f"past_key_values_{i}" for i in range(2 * layers)]
    per_block = kv_heads * block * head_dim * nbytes
    graphs = ["prefill", f"decoder_batch_{batch}"]
    output.mkdir(parents=True, exist_ok=True)
    say("🚀 Starting compilation")
    say(f"Model: {model_id}")
    say(f"Class: RBLN{arch}")
    say(f"Output: {output.absolute()}")
    say(f"rbln_config: {json.dumps(options, indent=2)}")
    wait_for_gate()
    models = {}
    for i, graph in enumerate(graphs):
        say(f"Compiling {graph} for {npu} x{devices} ...")
        pause()
        alloc = {
            "Weight": shard_grid(params * nbytes if graph == "prefill" else 0, devices, chiplets),
            "Kernel": shard_grid(8 * MIB * devices * chiplets, devices, chiplets),
            "Intermediate": shard_grid((24 if graph == "prefill" else 8) * MIB * devices * chiplets, devices, chiplets),
            "IO": shard_grid(2 * MIB * devices * chiplets, devices, chiplets),
        }
        tensors = {name: [[per_block // (devices * chiplets)] * chiplets for _ in range(devices)] for name in names}
        header = {"graph": graph, "npu": npu, "num_devices": devices, "alloc": alloc, "dram_tensors": tensors}
        models[graph] = rebel.RBLNCompiledModel.create(header, os.urandom(4096))
        models[graph].save(output / f"{graph}.rbln")
        say(f"Compiled {graph}")
        if i == 0:
            fail_or_hang()
    if explicit:
        blocks = explicit
    elif attn == "eager":
        blocks = full
    else:
        budget = budget_per_chiplet(memory_budget, npu)
        say(f"[KVCache] estimating kvcache_num_blocks (memory_budget={memory_budget})")
        blocks = estimate(models, set(names), 1, budget, full)
        if blocks < floor:
            raise ValueError(insufficient(blocks, floor, batch))
        say(f"[KVCache] kvcache_num_blocks={blocks} (floor {floor}, full {full})")
    for graph, model in models.items():
        model.exp_rescale_buffer_size({name: (blocks, 1) for name in names})
        model.save(output / f"{graph}.rbln")
    compile_cfgs = [
        {
            "compiled_model_name": graph,
            "input_info": [
                ["input_ids", [1 if graph == "prefill" else batch, chunk if graph == "prefill" else 1], "int64"]
            ],
            "npu": npu,
            "num_devices": devices,
        }
        for graph in graphs
    ]
    rbln_config: dict[str, Any] = {
        "cls_name": f"RBLN{arch}Config",
        "dtype": dtype,
        "optimum_rbln_version": os.environ.get("FAKE_OPTIMUM_VERSION", "0.12.0"),
        "_compile_cfgs": compile_cfgs,
        "batch_size": batch,
        "max_seq_len": max_seq_len,
        "use_inputs_embeds": False,
        "use_attention_mask": False,
        "quantization": {},
        "lora_config": None,
        "attn_impl": attn,
        "kvcache_partition_len": partition,
        "kvcache_block_size": block,
        "prefill_chunk_size": chunk,
        "kvcache_num_blocks": blocks,
        "cache_impl": "static",
        "sliding_window": None,
        "sliding_window_layers": [],
        "phases": ["prefill", "decode"],
        "logits_to_keep": 1,
        "output_hidden_states": False,
        "decoder_batch_sizes": [batch],
        "cache_metas": [
            {
                "name": name,
                "layer_index": i // 2,
                "shape": [full, kv_heads, block, head_dim],
                "layer_type": "full_attention",
                "is_auto": True,
                "dtype": dtype,
            }
            for i, name in enumerate(names)
        ],
    }
    (output / "rbln_config.json").write_text(json.dumps(rbln_config, indent=2))
    for name in ("config.json", "generation_config.json"):
        if (source / name).is_file():
            shutil.copy2(source / name, output / name)
    say("✅ Model compilation completed successfully")
    say(f"Saved to: {output.absolute()}")


# ---- post-compile kv-cache operations ------------------------------------------------------------------


def kvcache_operation(model_id: str, get: bool, target: int | None, output_dir: str | None, budget: str | None) -> None:
    src = Path(model_id)
    if not src.is_dir():
        raise ValueError(
            f"--model-id must be a local compiled-artifact directory for this operation, got '{model_id}'."
        )
    config = json.loads((src / "rbln_config.json").read_text())
    if "_meta" in config:
        raise RuntimeError(f"`{src / 'rbln_config.json'}` is an old version. Please recompile the model.")
    metas = config.get("cache_metas", config.get("kvcache_metas"))
    if "kvcache_num_blocks" not in config or metas is None:
        raise ValueError(
            f"The model at '{model_id}' ({config.get('cls_name')}) does not expose a top-level resizable kv-cache. "
            "Only decoder-only causal LM artifacts are supported."
        )
    if get:
        say(str(config["kvcache_num_blocks"]))
        return
    models = {p.stem: rebel.RBLNCompiledModel(p) for p in sorted(src.glob("*.rbln"))}
    if not models:
        raise FileNotFoundError(f"No .rbln compiled models found in '{model_id}'.")
    say(f"Loaded {len(models)} compiled models from {src}")
    current = config["kvcache_num_blocks"]
    resizable = {m["name"] for m in metas if m.get("layer_type") == "full_attention" and m.get("is_auto")}
    floor, full = floor_and_full(config)
    if target is None:
        npu = config["_compile_cfgs"][0]["npu"]
        target = estimate(models, resizable, current or 1, budget_per_chiplet(parse_value(budget or ""), npu), full)
        if target < floor:
            raise ValueError(insufficient(target, floor, config["batch_size"]))
        say(f"memory_budget {budget} fits kvcache_num_blocks={target}")
    wait_for_gate()
    fail_or_hang()
    if current <= 0:
        raise ValueError(f"The current kvcache_num_blocks ({current}) must be positive to rescale.")
    if target < floor:
        raise ValueError(
            f"kvcache_num_blocks={target} is below the minimum required for the full sequence length (num_min_blocks={floor})."
        )
    if target > current:
        say(
            f"WARNING: kvcache_num_blocks={target} is above the compiled count ({current}); it may fail to allocate at runtime.",
            err=True,
        )
    if target > full:
        say(
            f"WARNING: kvcache_num_blocks={target} exceeds num_full_blocks={full}; the excess blocks are never used.",
            err=True,
        )
    dst = src if output_dir is None else Path(output_dir)
    if dst.resolve() != src.resolve():
        dst.mkdir(parents=True, exist_ok=True)
        for item in src.iterdir():
            if item.suffix == ".rbln" or item.name == "rbln_config.json":
                continue
            say(f"Copying {item.name}")
            pause()
            if item.is_dir():
                shutil.copytree(item, dst / item.name, dirs_exist_ok=True)
            else:
                shutil.copy2(item, dst / item.name)
    for name, model in models.items():
        model.exp_rescale_buffer_size({t: (target, current) for t in resizable})
        pause()
        model.save(dst / f"{name}.rbln")
        say(f"Saved {name}.rbln")
    config["kvcache_num_blocks"] = target
    (dst / "rbln_config.json").write_text(json.dumps(config, indent=2))
    say(f"Set kvcache_num_blocks to {target} for artifact at {dst.absolute()}")


# ---- command line ---------------------------------------------------------------------------------------


def main() -> int:
    log = os.environ.get("FAKE_OPTIMUM_ARGV_LOG")
    if log:
        with open(log, "a") as f:
            f.write(json.dumps(sys.argv[1:]) + "\n")
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--version", action="store_true")
    if pre.parse_known_args()[0].version:
        say(f"optimum-rbln-cli {os.environ.get('FAKE_OPTIMUM_VERSION', '0.12.0')}")
        return 0
    parser = argparse.ArgumentParser(prog="optimum-rbln-cli")
    parser.add_argument("--model-id", dest="model_id", required=True)
    parser.add_argument("-o", "--output-dir", dest="output_dir", default="./rbln_out")
    parser.add_argument("--get-kvcache-num-blocks", action="store_true")
    parser.add_argument("--set-kvcache-num-blocks", type=int, default=None, metavar="N")
    parser.add_argument("--set-memory-budget", type=str, default=None, metavar="BUDGET")
    args, unknown = parser.parse_known_args()
    if args.get_kvcache_num_blocks or args.set_kvcache_num_blocks is not None or args.set_memory_budget is not None:
        if args.set_kvcache_num_blocks is not None and args.set_memory_budget is not None:
            say("--set-kvcache-num-blocks and --set-memory-budget are mutually exclusive.", err=True)
            return 2
        explicit_output = "--output-dir" in sys.argv or "-o" in sys.argv
        try:
            kvcache_operation(
                args.model_id,
                args.get_kvcache_num_blocks,
                args.set_kvcache_num_blocks,
                args.output_dir if explicit_output else None,
                args.set_memory_budget,
            )
        except Exception as exc:
            say(f"❌ Error: {exc}", err=True)
            return 1
        return 0
    options: dict = {}
    i = 0
    while i < len(unknown):
        arg = unknown[i]
        if arg.startswith("--"):
            name = arg[2:].replace("-", "_")
            if i + 1 < len(unknown) and not unknown[i + 1].startswith("--"):
                options[name] = parse_value(unknown[i + 1])
                i += 2
            else:
                options[name] = True
                i += 1
        else:
            i += 1
    try:
        compile_model(args.model_id, Path(args.output_dir), options)
    except Exception as exc:
        say(f"❌ Error during model compilation: {exc}", err=True)
        return 1
    return 0
