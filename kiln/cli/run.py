"""``kiln run``: run a package written by ``kiln compile`` (tvmc run).

The package's library, graph and parameters are loaded (:func:`kiln.runtime.package.load_package`) into a graph
executor, or into the debug executor with ``--profile``. Inputs come from ``--inputs x.npz`` by name; an input the
file lacks is filled as ``--fill-mode`` says (random values, seeded so runs repeat, or zeros or ones) with a note.
The model runs once; then

* ``--print-time``: mean, median, max, min and std of ``--repeat`` measurements of ``--number`` runs each, after a
  warm-up run (``GraphModule.benchmark``);
* ``--profile``: the per-kernel table of the debug executor over ``--repeat`` rounds (time, share of the run,
  calls, GFLOP/s, fused Relay operators, shapes), and how much of the whole run the kernels account for;
* ``--outputs out.npz``: the outputs, named ``output_0``, ``output_1`` ... as tvmc names them;
* every output is summarized (dtype, shape, range), and ``--print-top N`` lists the N largest values of the first
  output (of the first batch item): the top classes of a classifier.
"""

import argparse
import os
import zipfile

import numpy as np

from ..contrib import graph_executor
from ..contrib.debugger import debug_executor
from ..error import KilnError
from ..runtime.device import cpu
from ..runtime.package import load_package
from .common import add_verbose, note


def add_parser(commands):
    """Add ``kiln run`` to the ``kiln`` subcommands."""
    cmd = commands.add_parser(
        "run", help="run a compiled package: time it, profile it, save its outputs",
        description="Run a package written by kiln compile, as tvmc run does.",
        epilog="examples:\n  kiln run module.tar --inputs x.npz --outputs out.npz --print-top 5\n"
               "  kiln run module.tar --print-time --repeat 20\n  kiln run module.tar --profile",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    cmd.add_argument("package", help="the package (module.tar) written by kiln compile")
    cmd.add_argument("--device", default="cpu", choices=("cpu",), help="where to run (the CPU)")
    cmd.add_argument("-i", "--inputs", metavar="FILE.npz", help="input values by name, as numpy.savez writes them")
    cmd.add_argument("--fill-mode", default="random", choices=("random", "zeros", "ones"),
                     help="how to fill inputs --inputs does not give (default random, seeded)")
    cmd.add_argument("-o", "--outputs", metavar="FILE.npz", help="save the outputs (output_0, output_1, ...)")
    cmd.add_argument("--print-time", action="store_true", help="time the model and print mean/median/max/min/std")
    cmd.add_argument("--print-top", type=int, metavar="N", help="print the N largest values of the first output")
    cmd.add_argument("--profile", action="store_true", help="time every kernel (the debug executor) and print a table")
    cmd.add_argument("--repeat", type=int, default=10, metavar="N",
                     help="measurements for --print-time, rounds for --profile (default 10)")
    cmd.add_argument("--number", type=int, default=1, metavar="N",
                     help="runs per --print-time measurement (default 1)")
    add_verbose(cmd)
    cmd.set_defaults(handler=run_package)


def _fill(shape, dtype, mode, rng):
    dtype = np.dtype(dtype)
    if mode == "zeros":
        return np.zeros(shape, dtype)
    if mode == "ones":
        return np.ones(shape, dtype)
    if dtype.kind == "f":
        return rng.uniform(0.0, 1.0, shape).astype(dtype)
    return rng.integers(0, 2, shape).astype(dtype)  # booleans, and integers small enough to index any axis


def read_inputs(path, shapes, dtypes, fill_mode) -> dict:
    """The value of every input of the model (``shapes``/``dtypes`` by name): from the ``.npz`` at ``path``, the rest
    filled as ``fill_mode`` says (a note names them).

    Raises
    ------
    KilnError
        Naming the file and the input: a missing or non-npz file, a name the model has no input for, a shape or dtype
        that differs from the input's.
    """
    given: dict = {}
    if path is not None:
        if not os.path.isfile(path):
            raise KilnError(f"--inputs: no file {path}")
        if not zipfile.is_zipfile(path):
            raise KilnError(f"--inputs: {path} is not an .npz archive (numpy.savez writes one)")
        with np.load(path, allow_pickle=False) as archive:
            given = {name: archive[name] for name in archive.files}
        unknown = [name for name in given if name not in shapes]
        if unknown:
            raise KilnError(f"--inputs: {path} has {', '.join(map(repr, unknown))}, which the model has no input for "
                            f"(its inputs: {', '.join(map(repr, shapes)) or 'none'})")
    rng = np.random.default_rng(0)
    values = {}
    for name, shape in shapes.items():
        if name in given:
            value = given[name]
            if tuple(value.shape) != tuple(shape) or value.dtype != np.dtype(dtypes[name]):
                raise KilnError(f"--inputs: {path}: input {name!r} has shape {tuple(value.shape)} and dtype "
                                f"{value.dtype}; the model takes shape {tuple(shape)} and dtype {dtypes[name]}")
            values[name] = value
        else:
            values[name] = _fill(shape, dtypes[name], fill_mode, rng)
            where = f"not in {path}" if path else "not given"
            note("run", f"input {name!r} {dtypes[name]}{list(shape)} {where}: filled with {fill_mode} values")
    return values


def summarize(name, value) -> str:
    """One line describing an output: dtype, shape, and its range (and mean for numbers)."""
    text = f"{name}: {value.dtype}{list(value.shape)}"
    if value.size and value.dtype.kind in "biuf":
        numbers = value.astype(np.float64)
        text += f"  min {numbers.min():.6g}  max {numbers.max():.6g}  mean {numbers.mean():.6g}"
    return text


def top_values(value, count) -> list:
    """``(index, value)`` of the ``count`` largest values of the first batch item of ``value``, largest first."""
    row = value.reshape(value.shape[0], -1)[0] if value.ndim > 1 else value.reshape(-1)
    order = np.argsort(row, kind="stable")[::-1][:count]
    return [(int(i), row[i].item()) for i in order]


def run_package(args) -> int:
    """``kiln run``: see the module docstring."""
    for flag in ("repeat", "number", "print_top"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            raise KilnError(f"--{flag.replace('_', '-')} must be at least 1, got {value}")
    package = load_package(args.package)
    dev = cpu(0)
    create = debug_executor.create if args.profile else graph_executor.create
    module = create(package.graph, package.lib, dev)
    module.load_params(package.params)
    shapes, dtypes = module.get_input_info()
    module.set_input(**read_inputs(args.inputs, shapes, dtypes, args.fill_mode))
    module.run()
    outputs = {f"output_{i}": module.get_output(i).numpy() for i in range(module.get_num_outputs())}
    if args.print_time:
        print(module.benchmark(dev, number=args.number, repeat=args.repeat))
    if args.profile:
        report = module.profile(repeat=args.repeat)
        print(report)
        kernels = sum(call["Duration (us)"] for call in report.calls) / 1e3
        whole = report.total_us() / 1e3
        share = 100 * kernels / whole
        print(f"{len(report.calls)} kernel calls: {kernels:.3f} ms, {share:.1f}% of the whole run ({whole:.3f} ms; "
              f"the quicker half of {args.repeat} rounds timing each call, then the whole run)")
        if not 90 <= share <= 110:
            note("run", "the kernels and the whole run disagree by more than 10%: other processes are probably "
                        "competing for the cores, so these times are unreliable; profile again on a quieter machine "
                        "or with more --repeat rounds")
    if args.outputs:
        path = args.outputs if args.outputs.endswith(".npz") else f"{args.outputs}.npz"  # numpy.savez adds it
        np.savez(path, **outputs)
        print(f"saved {', '.join(outputs)} to {path}")
    for name, value in outputs.items():
        print(summarize(name, value))
    if args.print_top:
        first = outputs["output_0"]
        print(f"top {args.print_top} of output_0" + (" (batch item 0)" if first.ndim > 1 else "") + ":")
        for rank, (index, value) in enumerate(top_values(first, args.print_top), 1):
            print(f"  {rank:>3d}. index {index:>6d}  value {value:.6g}")
    return 0
