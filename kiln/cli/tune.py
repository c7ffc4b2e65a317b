"""``kiln tune``: search schedules for a model's kernels and write tuning records (tvmc tune, SPEC section 10).

Tuning is not implemented yet (issue #17). The command exists so scripts and ``--help`` find it: it reads its flags
(tvmc's names) and checks them, then exits with status 1 and one line saying that tuning is not implemented, rather
than pretending to tune. ``kiln compile --tuning-records`` likewise accepts a file and says it is ignored.
"""

import argparse
import os

from ..error import KilnError
from ..target.target import Target
from .common import add_verbose, parse_input_shapes

TUNERS = ("xgb", "xgb_knob", "ga", "random", "gridsearch")


def add_parser(commands):
    """Add ``kiln tune`` to the ``kiln`` subcommands."""
    cmd = commands.add_parser(
        "tune", help="search schedules for a model's kernels (not implemented yet)",
        description="Tune the kernels of a model and write the best schedules found as tuning records (JSON lines), "
                    "as tvmc tune does. Not implemented yet (issue #17): the command checks its flags and says so.",
        epilog="example:\n  kiln tune model.onnx -o records.json --trials 200 --tuner xgb",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    cmd.add_argument("model", help="the ONNX model")
    cmd.add_argument("-o", "--output", required=True, metavar="FILE", help="where to write the tuning records")
    cmd.add_argument("--target", default="llvm", help='what to tune for (default "llvm")')
    cmd.add_argument("--input-shapes", metavar='"NAME:[D1,D2,...] ..."', help="static shapes of the inputs")
    cmd.add_argument("--trials", type=int, default=1000, metavar="N", help="measurements per kernel (default 1000)")
    cmd.add_argument("--tuner", default="xgb", choices=TUNERS, help="the search strategy (default xgb)")
    cmd.add_argument("--early-stopping", type=int, metavar="N", help="stop a kernel after N trials without progress")
    cmd.add_argument("--number", type=int, default=10, metavar="N", help="runs per measurement (default 10)")
    cmd.add_argument("--repeat", type=int, default=1, metavar="N", help="measurements per trial (default 1)")
    cmd.add_argument("--min-repeat-ms", type=int, default=0, metavar="MS", help="least duration of a measurement")
    cmd.add_argument("--timeout", type=int, default=10, metavar="S", help="seconds allowed per build or run")
    cmd.add_argument("--parallel", type=int, default=4, metavar="N", help="builds in parallel (default 4)")
    cmd.add_argument("--tuning-records", metavar="FILE", help="earlier records to continue from")
    add_verbose(cmd)
    cmd.set_defaults(handler=run_tune)


def run_tune(args) -> int:
    """``kiln tune``: check the flags, then refuse (see the module docstring)."""
    if not os.path.isfile(args.model):
        raise KilnError(f"no model file at {args.model}")
    Target(args.target)
    if args.input_shapes:
        parse_input_shapes(args.input_shapes)
    for flag in ("trials", "number", "repeat", "parallel", "timeout"):
        if getattr(args, flag) < 1:
            raise KilnError(f"--{flag} must be at least 1, got {getattr(args, flag)}")
    if args.tuning_records is not None and not os.path.isfile(args.tuning_records):
        raise KilnError(f"--tuning-records: no such file {args.tuning_records}")
    raise KilnError("tuning is not implemented yet (issue #17); kiln compile uses the default schedules")
