"""``kiln opt``: run a textual pass pipeline over a module in the Relay text format.

``kiln opt`` is LLVM's ``opt`` for kiln: it reads a module (a file, or stdin), runs a pipeline written as
:func:`kiln.transform.parse_pipeline` reads it under the given opt_level and config, and prints the result. The
debugging instruments are switches: ``--print-after-all``, ``--print-changed`` (diffs), ``--time-passes``,
``--verify-each`` (``VerifyWellFormed``), ``--verify-semantics`` and ``--opt-bisect-limit N``. What instruments
print goes to stderr, so stdout holds only the resulting module. Bad input (unknown pass, malformed pipeline,
unknown config key or bad value, unparsable module) prints one line ``kiln opt: error: ...`` and exits with 1.

Examples::

    kiln opt model.relay -p "InferType,FoldConstant,FuseOps(fuse_opt_level=2)" --opt-level 3
    cat model.relay | kiln opt -p FuseOps --pass-config relay.FuseOps.max_depth=4 --time-passes
    kiln opt --print-passes
"""

import argparse
import contextlib
import dataclasses
import sys

from .. import relay, transform
from ..error import KilnError
from ..ir import instrument
from ..ir.transform import get_pass_factory
from .common import add_verbose, parse_pass_config


def add_parser(commands):
    """Add ``kiln opt`` to the ``kiln`` subcommands."""
    opt = commands.add_parser(
        "opt",
        help="run a pass pipeline over a module in the Relay text format",
        description="Read a module in the Relay text format, run a pass pipeline over it and print the result.",
        epilog='example:\n  kiln opt model.relay -p "InferType,FoldConstant,FuseOps(fuse_opt_level=2)" --opt-level 3',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    opt.add_argument("input", nargs="?", default="-", help="the module text file ('-' or nothing: read stdin)")
    opt.add_argument("-p", "--passes", default="", metavar="PIPELINE",
                     help="the pipeline, e.g. 'InferType,FuseOps(fuse_opt_level=2),sequential(DeadCodeElimination)' "
                          "(default: none, the module is only parsed and printed)")
    opt.add_argument("-O", "--opt-level", type=int, default=2, metavar="N",
                     help="PassContext opt_level: passes above it are skipped (default 2)")
    opt.add_argument("--pass-config", action="append", default=[], metavar="KEY=VALUE",
                     help="a PassContext config option, e.g. relay.FuseOps.max_depth=4 (repeatable)")
    opt.add_argument("--required-pass", action="append", default=[], metavar="NAME",
                     help="a pass that runs whatever the opt_level (repeatable)")
    opt.add_argument("--disabled-pass", action="append", default=[], metavar="NAME",
                     help="a pass that never runs (repeatable)")
    opt.add_argument("--print-before-all", action="store_true", help="print the module before every pass (stderr)")
    opt.add_argument("--print-after-all", action="store_true", help="print the module after every pass (stderr)")
    opt.add_argument("--print-changed", action="store_true",
                     help="print a unified diff after every pass that changed the module (stderr)")
    opt.add_argument("--time-passes", action="store_true", help="print the time of every pass, nested (stderr)")
    opt.add_argument("--verify-each", action="store_true",
                     help="check the IR after every pass (scoping, types) and name the pass that broke it")
    opt.add_argument("--verify-semantics", action="store_true",
                     help="evaluate @main on random inputs before and after every pass and name the first pass "
                          "that changed the result")
    opt.add_argument("--opt-bisect-limit", type=int, default=None, metavar="N",
                     help="run only the first N passes (transform.max_passes); each is reported on stderr")
    opt.add_argument("--print-passes", action="store_true", help="list the registered passes and their options")
    opt.add_argument("--print-configs", action="store_true", help="list the registered config options")
    opt.add_argument("-o", "--output", default="-", metavar="FILE", help="where to write the result (default stdout)")
    add_verbose(opt)
    opt.set_defaults(handler=run_opt)


def _describe_pass(name):
    factory = get_pass_factory(name)
    if dataclasses.is_dataclass(factory):
        options = []
        for f in dataclasses.fields(factory):
            if f.name.startswith("_") or not f.init:
                continue
            if f.default is not dataclasses.MISSING:
                options.append(f"{f.name}={f.default!r}")
            elif f.default_factory is not dataclasses.MISSING:
                options.append(f"{f.name}={f.default_factory()!r}")
            else:
                options.append(f.name)
        if options:
            return f"{name}({', '.join(options)})"
    return name


def _read_input(path):
    if path == "-":
        return sys.stdin.read(), "<stdin>"
    with open(path, encoding="utf-8") as f:
        return f.read(), path


def _instruments(args):
    chosen = []
    if args.verify_each:
        chosen.append(instrument.VerifyWellFormed())
    if args.verify_semantics:
        chosen.append(instrument.VerifySemantics())
    if args.print_before_all:
        chosen.append(instrument.PrintBeforeAll())
    if args.print_after_all:
        chosen.append(instrument.PrintAfterAll())
    if args.print_changed:
        chosen.append(instrument.PrintAfterAll(only_changed=True))
    timing = instrument.PassTimingInstrument() if args.time_passes else None
    if timing is not None:
        chosen.append(timing)
    return chosen, timing


def run_opt(args) -> int:
    """``kiln opt``: see the module docstring."""
    if args.print_passes:
        for name in transform.list_passes():
            print(_describe_pass(name))
        return 0
    if args.print_configs:
        for name, spec in transform.list_configs().items():
            print(f"{name}: {spec['python_type']} (default {spec['default']!r})")
        return 0
    pipeline = transform.parse_pipeline(args.passes)
    config = parse_pass_config(args.pass_config, args.opt_bisect_limit)
    text, source = _read_input(args.input)
    try:
        mod = relay.parse(text, source_name=source)
    except KilnError as exc:
        raise KilnError(f"{source}: {exc}") from exc
    instruments, timing = _instruments(args)
    ctx = transform.PassContext(
        opt_level=args.opt_level, required_pass=args.required_pass, disabled_pass=args.disabled_pass,
        instruments=instruments, config=config,
    )
    with contextlib.redirect_stdout(sys.stderr), ctx:  # instruments print to stderr; stdout is the result
        mod = pipeline(mod)
        if timing is not None:
            print(timing.render(), end="")
    result = str(mod)
    if args.output == "-":
        print(result)
    else:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(result + "\n")
    return 0
