"""The CLI builds only the named command's parser: every help text, parse and usage error stays the whole parser's;
and every command it parses is run by a module of cli/commands' table."""

from __future__ import annotations

import argparse
import importlib

import pytest

from rbln_artifact_studio.cli import commands
from rbln_artifact_studio.cli.main import build_parser, command_named


def _commands() -> list[str]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return list(sub.choices)


COMMANDS = _commands()
VARIANTS = [
    ["--help"],
    ["-h"],
    [],
    ["--bogus"],
    ["x", "y", "z", "w"],
    ["x", "--json", "--bogus"],
    ["--version"],
    ["x", "--backend", "nope"],
    ["x", "--timeout", "soon"],
    ["x", "--jobs", "0"],
    ["x", "--json", "--format", "csv"],
    ["x", "--format", "xml"],
    ["x", "y", "--json", "-v"],
    ["--", "-x", "1"],
]


def _outcome(parser: argparse.ArgumentParser, argv: list[str], capsys: pytest.CaptureFixture[str]) -> object:
    try:
        parsed: object = vars(parser.parse_args(argv))
        code: object = None
    except SystemExit as exc:
        parsed, code = None, exc.code
    return parsed, code, capsys.readouterr()


@pytest.mark.parametrize("command", COMMANDS)
def test_a_command_reads_and_words_its_line_as_the_whole_parser_does(
    command: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    whole = build_parser()  # parsing leaves a parser as it was: one for every line
    for variant in VARIANTS:
        for argv in ([command, *variant], ["-v", command, *variant], ["--verbose", command, *variant]):
            assert command_named(argv) == command
            lean = _outcome(build_parser(command_named(argv)), argv, capsys)
            assert lean == _outcome(whole, argv, capsys), argv


@pytest.mark.parametrize(
    "argv",
    [[], ["--help"], ["-h"], ["--version"], ["scna", "r"], ["sca", "r"], ["--bogus", "scan"], ["-v"], ["--", "scan"]],
)
def test_other_lines_get_the_whole_parser(
    argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    lean = _outcome(build_parser(command_named(argv)), argv, capsys)
    assert lean == _outcome(build_parser(), argv, capsys)
    if argv[:1] in (["scna"], ["sca"]):  # a typo lists every command, as before
        assert "invalid choice" in lean[2].err and "get-kvcache-num-blocks" in lean[2].err  # type: ignore[index]


def test_only_the_named_command_is_built() -> None:
    sub = next(a for a in build_parser("scan")._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == ["scan"]


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    sub = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub[0].choices) if sub else {}


def test_every_command_parsed_is_in_the_table_with_its_module_and_function() -> None:
    names: list[str] = []
    for command, parser in _subcommands(build_parser()).items():
        actions = list(_subcommands(parser))  # vllm-cache's, each its own entry
        names += [f"{command} {action}" for action in actions] if actions else [command]
    assert sorted(names) == sorted(commands.COMMANDS)
    for name, (module, function) in commands.COMMANDS.items():
        assert callable(getattr(importlib.import_module(f"rbln_artifact_studio.cli.{module}"), function)), name


def test_a_parsed_line_names_its_entry_in_the_table() -> None:
    assert commands.command_name(build_parser("scan").parse_args(["scan", "r"])) == "scan"
    assert commands.command_name(build_parser().parse_args(["-v", "vllm-cache", "list"])) == "vllm-cache list"
    lookup = build_parser("vllm-cache").parse_args(["vllm-cache", "lookup", "--", "vllm", "serve", "m"])
    assert commands.command_name(lookup) == "vllm-cache lookup"
