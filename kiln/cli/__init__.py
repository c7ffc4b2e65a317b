"""The ``kiln`` command line, tvmc's commands for kiln, one module per command:

* ``kiln compile`` (:mod:`.compile`): an ONNX model or Relay text to a deployable ``module.tar``;
* ``kiln run`` (:mod:`.run`): run a package, time it, profile it per kernel, save its outputs;
* ``kiln tune`` (:mod:`.tune`): search schedules (not implemented yet: it says so);
* ``kiln opt`` (:mod:`.opt`): run a pass pipeline over Relay text, as LLVM's ``opt``.

Bad input (a missing or unreadable file, a malformed option, an unknown target or pass) prints one line
``kiln <command>: error: ...`` on stderr and exits with status 1; ``--verbose`` prints the traceback first. A usage
error (an unknown flag) is one line too, with status 2.
"""

import sys
import traceback

from . import compile as compile_command
from . import opt, run, tune
from .common import CommandParser, one_line, parse_input_shapes

__all__ = ["main", "parse_input_shapes"]


def _build_parser():
    parser = CommandParser(prog="kiln", description="kiln: a deep-learning compiler built on TVM's Relay/TIR "
                                                    "architecture.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CommandParser)
    for command in (compile_command, run, tune, opt):
        command.add_parser(commands)
    return parser


def main(argv=None) -> int:
    """Entry point of the ``kiln`` console script; returns the exit code."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return args.handler(args)
    except KeyboardInterrupt:
        print(f"kiln {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001  (every failure becomes one line; --verbose shows where it came from)
        if args.verbose:
            traceback.print_exc()
        print(f"kiln {args.command}: error: {one_line(exc)}", file=sys.stderr)
        return 1
