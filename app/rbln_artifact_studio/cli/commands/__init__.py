"""The CLI's commands: which module and function run each one (COMMANDS), the module imported only when its command
runs, so a command line loads its own command's dependencies and no other's."""

from __future__ import annotations

import argparse
import importlib

from rbln_artifact_studio.core.stop_signals import terminate_raises

# Command name -> (module under rbln_artifact_studio.cli, function taking the parsed arguments). vllm-cache's actions
# are named each: lookup and seed read a serve command's key with the compile model (pydantic), list and prune never.
COMMANDS: dict[str, tuple[str, str]] = {
    "get-kvcache-num-blocks": ("get", "cmd_get"),  # parsed (`get -- DIR`, --output-dir): the fast path's module
    "set-kvcache-num-blocks": ("commands.resize", "cmd_set_blocks"),
    "set-memory-budget": ("commands.resize", "cmd_set_budget"),
    "inspect": ("commands.artifacts", "cmd_inspect"),
    "serving": ("commands.artifacts", "cmd_serving"),
    "explore": ("commands.artifacts", "cmd_explore"),
    "plan": ("commands.plan", "cmd_plan"),
    "scan": ("commands.scan", "cmd_scan"),
    "compile": ("commands.compile", "cmd_compile"),
    "presets": ("commands.compile", "cmd_presets"),
    "backends": ("commands.compile", "cmd_backends"),
    "devices": ("commands.fleet", "cmd_devices"),
    "place": ("commands.fleet", "cmd_place"),
    "server-groups": ("commands.fleet", "cmd_server_groups"),
    "set-server-group": ("commands.fleet", "cmd_set_server_group"),
    "remove-server-group": ("commands.fleet", "cmd_remove_server_group"),
    "download": ("commands.servers", "cmd_download"),
    "jobs": ("commands.resize", "cmd_jobs"),
    "trust-host": ("commands.servers", "cmd_trust_host"),
    "vllm-cache list": ("commands.vllm_cache", "cmd_list"),
    "vllm-cache prune": ("commands.vllm_cache", "cmd_prune"),
    "vllm-cache lookup": ("commands.vllm_serve", "cmd_lookup"),
    "vllm-cache seed": ("commands.vllm_serve", "cmd_seed"),
}


def command_name(args: argparse.Namespace) -> str:
    """The parsed command's name in COMMANDS: `vllm-cache ACTION` for one of vllm-cache's actions."""
    action = getattr(args, "cache_command", None)
    return f"{args.command} {action}" if action else str(args.command)


def run(args: argparse.Namespace) -> int:
    """Run the parsed command; SIGTERM cancels it as Ctrl-C does (staging folders and locks cleaned up)."""
    module, function = COMMANDS[command_name(args)]
    # deferred: the one import of a command's module, by the table, when that command runs
    command = getattr(importlib.import_module(f"rbln_artifact_studio.cli.{module}"), function)
    with terminate_raises():
        return int(command(args))
