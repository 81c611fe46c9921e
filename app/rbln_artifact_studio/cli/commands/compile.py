"""`compile` (optimum-rbln-cli's bare --model-id too) and what it draws on: the bundled model presets and the
backends available here."""

from __future__ import annotations

import argparse

from rbln_artifact_studio.backends.choice import BackendChoice
from rbln_artifact_studio.backends.registry import detect_backends
from rbln_artifact_studio.cli.commands.common import bar_progress, log_line, print_json
from rbln_artifact_studio.cli.problems import warn
from rbln_artifact_studio.core.location import parse_location
from rbln_artifact_studio.core.model.modelspec import preset_ids, resolve_model
from rbln_artifact_studio.core.simulator.compile_defaults import with_defaults
from rbln_artifact_studio.core.simulator.compiler import CompileRequest
from rbln_artifact_studio.core.simulator.memory_model import weight_bytes_per_shard
from rbln_artifact_studio.core.sizes import format_bytes
from rbln_artifact_studio.places.delivery import compile_to
from rbln_artifact_studio.places.kind import Report
from rbln_artifact_studio.places.read_back import confirm_blocks


def compile_request(args: argparse.Namespace) -> CompileRequest:
    """The compile options of a parsed command line (the GUI's "Show command" is tested against this)."""
    return CompileRequest(
        model_id=args.model_id,
        npu=args.npu,
        num_devices=1 if args.num_devices is None else args.num_devices,  # 0 is refused, not taken as unset
        batch_size=args.batch_size,
        max_seq_len=args.max_seq_len,
        attn_impl=args.attn_impl,
        kvcache_partition_len=args.kvcache_partition_len,
        prefill_chunk_size=args.prefill_chunk_size,
        memory_budget=args.memory_budget,
        kvcache_num_blocks=args.kvcache_num_blocks,
        materialize_weights=args.materialize_weights,
    )


def cmd_compile(args: argparse.Namespace) -> int:
    output = parse_location(args.output_dir)  # a folder here, on a server or in a bucket: parsed once
    # The wizard's defaults where none were given (one function for both): a partition that divides max_seq_len.
    request = with_defaults(compile_request(args), devices_given=args.num_devices is not None)
    result = compile_to(request, output, BackendChoice.parse(args.backend), Report(log_line, bar_progress()))
    confirm_blocks(result.where, result.num_blocks)  # what the place holds now is what is confirmed
    for warning in result.warnings:
        warn(warning)
    if args.json:
        print_json(result.to_json())
    else:
        print(result.summary())
    return 0


def cmd_presets(args: argparse.Namespace) -> int:
    presets = [(model_id, resolve_model(model_id).spec) for model_id in preset_ids()]
    if args.json:
        print_json(
            [
                {
                    "model_id": model_id,
                    "architecture": spec.architecture,
                    "layers": spec.num_hidden_layers,
                    "kv_heads": spec.kv_heads,
                    "head_dim": spec.dim_per_head,
                    "max_position_embeddings": spec.max_position_embeddings,
                    "weights_bytes": weight_bytes_per_shard(spec, 1),
                }
                for model_id, spec in presets
            ]
        )
    else:
        for model_id, spec in presets:
            print(
                f"{model_id:36} {spec.architecture:24} {spec.num_hidden_layers:3} layers  "
                f"max_seq_len {spec.max_position_embeddings:>7,}  "
                f"weights {format_bytes(weight_bytes_per_shard(spec, 1))}"
            )
    return 0


def cmd_backends(args: argparse.Namespace) -> int:
    found = detect_backends()
    if args.json:
        print_json([b.to_json() for b in found])
    else:
        for b in found:
            print(b.line())
    return 0
