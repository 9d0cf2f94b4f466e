"""Command line: ``fedtheory COMMAND``. One module per command family; each exposes
``add_parsers(sub)``, which adds its subcommands with their handler as ``func``. Handlers
import what they need when they run, so ``fedtheory --help`` stays fast."""

from __future__ import annotations

import argparse

from fedtheory import __version__
from fedtheory.cli import catalogue, pep, sweep, theorem, tightness, validate

COMMANDS = (catalogue, theorem, validate, tightness, sweep, pep)


def build_parser() -> argparse.ArgumentParser:
    """The ``fedtheory`` parser with every command's subparsers."""
    parser = argparse.ArgumentParser(
        prog="fedtheory", description="Check federated-learning theory against experiment."
    )
    parser.add_argument("--version", action="version", version=f"fedtheory {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parsers(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``fedtheory`` with ``argv`` (default: the process arguments); returns the exit
    status."""
    args = build_parser().parse_args(argv)
    return args.func(args)
