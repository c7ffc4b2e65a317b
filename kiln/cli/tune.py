"""``kiln tune``: search schedules for a model's kernels and write tuning records (tvmc tune, SPEC section 10).

The model is imported as ``kiln compile`` imports it, its tunable kernels extracted
(``autotvm.task.extract_from_program``, at opt_level 3 for ``--target``), and each tuned in turn with ``--tuner``
for up to ``--trials`` measurements (the default config first, so the records are never slower than an untuned
build), every measurement appended to ``--output`` as a JSON-lines record. A progress bar per kernel (tqdm) shows
the trials done and the best GFLOP/s so far. ``--time-budget S`` bounds the whole run: each kernel gets the time
left divided by the kernels left, so time a kernel does not use goes to the next. With ``--scheduler gradient`` the
kernels are not tuned in turn: ``--trials`` times the number of kernels is spent in rounds, each round going to the
kernel whose tuning is expected to cut the model's latency most (``autotvm.tuner.TaskScheduler``), and the time
budget bounds the whole run; one progress bar covers every kernel. ``--tuning-records`` names an
earlier log: its configs are not measured again, and the XGBoost tuner learns from its records of other kernels of
the same template. At the end one line per kernel says its best and its default GFLOP/s.

``kiln compile --tuning-records records.json`` then builds with the best record of each kernel.
"""

import argparse
import os
import time

from .. import autotvm
from ..error import KilnError
from ..relay.build import resolve_build_target
from ..target.target import Target
from .common import add_verbose, note, parse_input_shapes
from .compile import _import

TUNERS = ("xgb", "xgb_knob", "ga", "random", "gridsearch")


def add_parser(commands):
    """Add ``kiln tune`` to the ``kiln`` subcommands."""
    cmd = commands.add_parser(
        "tune", help="search schedules for a model's kernels",
        description="Tune the kernels of a model and write the schedules measured as tuning records (JSON lines), "
                    "as tvmc tune does; kiln compile --tuning-records builds with the best of them.",
        epilog="example:\n  kiln tune model.onnx -o records.json --trials 200 --tuner xgb --time-budget 900",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    cmd.add_argument("model", help="the ONNX model")
    cmd.add_argument("-o", "--output", required=True, metavar="FILE", help="where to append the tuning records")
    cmd.add_argument("--target", default="llvm", help='what to tune for (default "llvm")')
    cmd.add_argument("--input-shapes", metavar='"NAME:[D1,D2,...] ..."', help="static shapes of the inputs")
    cmd.add_argument("--trials", type=int, default=1000, metavar="N", help="measurements per kernel (default 1000)")
    cmd.add_argument("--time-budget", type=float, metavar="S", help="seconds for the whole run (default: no limit)")
    cmd.add_argument("--tuner", default="xgb", choices=TUNERS, help="the search strategy (default xgb)")
    cmd.add_argument("--early-stopping", type=int, metavar="N", help="stop a kernel after N trials without progress")
    cmd.add_argument("--scheduler", default="sequential", choices=("sequential", "gradient"),
                     help="tune the kernels in turn (default), or spend the trials where the latency gains most")
    cmd.add_argument("--number", type=int, default=10, metavar="N", help="runs per measurement (default 10)")
    cmd.add_argument("--repeat", type=int, default=1, metavar="N", help="measurements per trial (default 1)")
    cmd.add_argument("--min-repeat-ms", type=int, default=0, metavar="MS", help="least duration of a measurement")
    cmd.add_argument("--timeout", type=int, default=10, metavar="S", help="seconds allowed per build or run")
    cmd.add_argument("--parallel", type=int, default=4, metavar="N", help="builds in parallel (default 4)")
    cmd.add_argument("--tuning-records", metavar="FILE", help="earlier records to continue from")
    add_verbose(cmd)
    cmd.set_defaults(handler=run_tune)


def _check(args):
    if not os.path.isfile(args.model):
        raise KilnError(f"no model file at {args.model}")
    target = resolve_build_target(Target(args.target), what="--target")
    if args.input_shapes:
        parse_input_shapes(args.input_shapes)
    for flag in ("trials", "number", "repeat", "parallel", "timeout"):
        if getattr(args, flag) < 1:
            raise KilnError(f"--{flag} must be at least 1, got {getattr(args, flag)}")
    if args.time_budget is not None and args.time_budget <= 0:
        raise KilnError(f"--time-budget must be positive, got {args.time_budget:g}")
    if args.tuning_records is not None and not os.path.isfile(args.tuning_records):
        raise KilnError(f"--tuning-records: no such file {args.tuning_records}")
    folder = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(folder):
        raise KilnError(f"--output {args.output}: the directory {folder} does not exist")
    return target


def _make_tuner(name, task):
    if name in ("xgb", "xgb_knob"):
        return autotvm.tuner.XGBTuner(task, feature_type="knob" if name == "xgb_knob" else "itervar")
    if name == "ga":
        return autotvm.tuner.GATuner(task, pop_size=50)
    if name == "random":
        return autotvm.tuner.RandomTuner(task)
    return autotvm.tuner.GridSearchTuner(task)


class _Deadline:
    """A callback stopping a tuner once its share of the time budget is spent."""

    def __init__(self, seconds):
        self.end = time.monotonic() + seconds

    def __call__(self, tuner, inputs, results):
        if time.monotonic() >= self.end:
            tuner.stop()


class _DefaultRate:
    """A callback remembering the FLOP/s of the task's default config (measured first)."""

    def __init__(self, task):
        self.index, self.flops = task.default_index, None

    def __call__(self, tuner, inputs, results):
        for inp, res in zip(inputs, results, strict=True):
            if inp.config.index == self.index and res.error_no == 0 and res.costs:
                self.flops = tuner.task.flop / res.mean_cost


def run_tune(args) -> int:
    """``kiln tune`` (see the module docstring)."""
    target = _check(args)
    history = list(autotvm.record.load_from_file(args.tuning_records)) if args.tuning_records else []
    args.model_format = None
    mod, params, description = _import(args)  # the same import (and notes) as kiln compile
    start = time.monotonic()
    tasks = autotvm.task.extract_from_program(mod, params, target=target)
    print(f"kiln tune: {args.model} ({description}): {len(tasks)} tunable kernels for target {args.target!r}, "
          f"{args.trials} trials each with the {args.tuner} tuner -> {args.output}")
    if not tasks:
        note("tune", "the model has no kernel with a tuning template; nothing to tune")
        return 0
    option = autotvm.measure_option(
        builder=autotvm.LocalBuilder(n_parallel=args.parallel, timeout=args.timeout),
        runner=autotvm.LocalRunner(number=args.number, repeat=args.repeat, timeout=args.timeout,
                                   min_repeat_ms=args.min_repeat_ms))
    tuners = [_resumed_tuner(args.tuner, task, history) for task in tasks]
    if args.scheduler == "gradient":
        summary = _tune_scheduled(args, tasks, tuners, option, start)
    else:
        summary = _tune_in_turn(args, tasks, tuners, option, start)
    for i, (task, best, default, trials) in enumerate(summary):
        ratio = f" ({best / default:.2f}x)" if default else ""
        base = f"{default / 1e9:.2f}" if default else "-"
        print(f"  [{i + 1}] {task.name} {_shapes(task)}: best {best / 1e9:.2f} GFLOP/s{ratio}, default {base} "
              f"GFLOP/s, {trials} trials")
    print(f"kiln tune: records appended to {args.output} ({time.monotonic() - start:.0f} s)")
    return 0


def _resumed_tuner(name, task, history):
    """The tuner of ``task``, not measuring again what ``history`` holds (but its default, the run's baseline)."""
    tuner = _make_tuner(name, task)
    done = {inp.config.index for inp, _ in history if inp.task.workload == task.workload}
    tuner.visited |= done - {task.default_index}
    if hasattr(tuner, "load_history"):
        tuner.load_history(history)
    return tuner


def _tune_scheduled(args, tasks, tuners, option, start):
    """``--scheduler gradient``: one budget over every kernel, spent by the task scheduler."""
    total = sum(min(args.trials, len(t.config_space) - len(tuner.visited)) for t, tuner in zip(tasks, tuners,
                                                                                               strict=True))
    defaults = [_DefaultRate(task) for task in tasks]
    by_task = {id(task): d for task, d in zip(tasks, defaults, strict=True)}

    def remember_default(tuner, inputs, results):
        by_task[id(tuner.task)](tuner, inputs, results)

    callbacks = [autotvm.callback.progress_bar(total, prefix=f"{len(tasks)} kernels"),
                 autotvm.callback.log_to_file(args.output), remember_default]
    budget = None if args.time_budget is None else max(0.0, args.time_budget - (time.monotonic() - start))
    scheduler = autotvm.tuner.TaskScheduler(tasks, tuners=tuners)
    scheduler.tune(total, option, trials_per_round=args.parallel, early_stopping=args.early_stopping,
                   callbacks=callbacks, time_budget=budget)
    return [(task, tuner.best_flops, d.flops, scheduler.task_trials[i])
            for i, (task, tuner, d) in enumerate(zip(tasks, tuners, defaults, strict=True))]


def _tune_in_turn(args, tasks, tuners, option, start):
    """``--scheduler sequential``: each kernel tuned for its share of the trials and of the time left."""
    summary = []
    for i, (task, tuner) in enumerate(zip(tasks, tuners, strict=True)):
        trials = min(args.trials, len(task.config_space) - len(tuner.visited))
        default = _DefaultRate(task)
        callbacks = [autotvm.callback.progress_bar(trials, prefix=f"[{i + 1}/{len(tasks)}] {task.name}"),
                     autotvm.callback.log_to_file(args.output), default]
        if args.time_budget is not None:
            left = args.time_budget - (time.monotonic() - start)
            callbacks.append(_Deadline(max(0.0, left) / (len(tasks) - i)))
        tuner.tune(trials, option, early_stopping=args.early_stopping, callbacks=callbacks)
        summary.append((task, tuner.best_flops, default.flops, tuner.trials))
    return summary


def _shapes(task) -> str:
    tensors = [a for a in task.args if isinstance(a, tuple) and a and a[0] == "TENSOR"]
    return " ".join("x".join(str(d) for d in t[1]) for t in tensors)
