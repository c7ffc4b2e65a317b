"""Tuned against default schedules (kiln.autotvm, issue 17), in three modes.

``layers`` (the default): for each layer build a one-convolution model, extract its task (the blocked
``conv2d_NCHWc.x86`` kernel after AlterOpLayout), measure every config of its space (or ``--trials`` of them with
``--tuner``), and print the default config's GFLOP/s, the best one's, and which config that is. The default config
is measured in the same run, so the ratio is what tuning buys on this CPU.

``compare``: the XGBoost tuner against random search at equal trials on one ResNet-50 convolution task (stage 3's
3x3, 256 channels at 14x14) and one dense task (BERT-base's feed-forward, 128 x 768 -> 3072): the best GFLOP/s after
each number of trials, for each of ``--seeds`` runs, and how many trials each needs to come within ``--tolerance``
(1%: the measurements' noise) of random search's final best. Random's final best config and XGBoost's best after
half the trials are then re-measured side by side (``--remeasure`` rounds), since each tuner's best is the maximum
of noisy measurements. The default config is every run's first candidate
unless ``--without-default``: then neither tuner measures it (it is measured once, for reference), and the curves
show the search alone.

``model``: ``kiln tune`` with ``--time-budget`` on a small ONNX model (a reduced MobileNetV2 by default, with
``--scheduler gradient``), then the default build and the tuned build timed alternately, ``--repeat`` rounds of
``--number`` runs each (the median reported).

``ray``: the same configs of one layer's task (``--layers``, the first; every config, or ``--trials`` drawn at random)
measured with ``LocalRunner`` and with ``RayRunner`` on a local Ray instance, the two passes alternating in batches
so both see the same load: each runner's five best configs with their GFLOP/s under both, and the rank correlation
of the two measurements.

Every mode prints the machine's load (``uptime``) first: measurements on a loaded machine are noisy, so compare
ratios measured in the same run, and rerun on a quiet machine for absolute numbers.

    .venv/bin/python bench/bench_tune.py                                   # ResNet-style 3x3 layers, every config
    .venv/bin/python bench/bench_tune.py --mode compare --trials 48 --seeds 2
    .venv/bin/python bench/bench_tune.py --mode model --time-budget 180
    .venv/bin/python bench/bench_tune.py --mode ray --layers resnet_7x7_3x3
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import kiln
from kiln import autotvm, relay

LAYERS = {  # name: (in channels, out channels, size, kernel, stride)
    "resnet_56x56_3x3": (64, 64, 56, 3, 1),
    "resnet_28x28_3x3": (128, 128, 28, 3, 1),
    "resnet_14x14_3x3": (256, 256, 14, 3, 1),
    "resnet_7x7_3x3": (512, 512, 7, 3, 1),
    "odd_13x13_3x3": (96, 96, 13, 3, 1),
    "small_14x14_16_32": (16, 32, 14, 3, 1),
}
TUNERS = {"gridsearch": autotvm.tuner.GridSearchTuner, "random": autotvm.tuner.RandomTuner,
          "ga": autotvm.tuner.GATuner, "xgb": autotvm.tuner.XGBTuner}


def conv_task(c, o, size, k, stride, target):
    x = relay.var("x", shape=(1, c, size, size))
    w = relay.var("w", shape=(o, c, k, k))
    y = relay.nn.conv2d(x, w, strides=(stride, stride), padding=(k // 2, k // 2), channels=o, kernel_size=(k, k))
    mod = kiln.IRModule.from_expr(relay.Function([x, w], y))
    params = {"w": np.random.default_rng(0).uniform(-1, 1, (o, c, k, k)).astype("float32")}
    (task,) = autotvm.task.extract_from_program(mod, params, target=target, ops=["nn.conv2d"])
    return task


def dense_task(m, k, n, target):
    x = relay.var("x", shape=(m, k))
    w = relay.var("w", shape=(n, k))
    mod = kiln.IRModule.from_expr(relay.Function([x, w], relay.nn.dense(x, w)))
    params = {"w": np.random.default_rng(0).uniform(-1, 1, (n, k)).astype("float32")}
    (task,) = autotvm.task.extract_from_program(mod, params, target=target, ops=["nn.dense"])
    return task


def _option(args):
    return autotvm.measure_option(builder=autotvm.LocalBuilder(timeout=60),
                                  runner=autotvm.LocalRunner(number=args.number, repeat=args.repeat, timeout=60))


def _gflops(task, result):
    """GFLOP/s of one measurement (0 for an error)."""
    return task.flop / result.mean_cost / 1e9 if result.error_no == 0 else 0.0


def run_layers(args):
    print(f"{'layer':<22}{'space':>6}{'trials':>7}{'default':>10}{'best':>10}{'ratio':>7}  best config")
    for name in args.layers.split(","):
        task = conv_task(*LAYERS[name], args.target)
        results = {}

        def collect(tuner, inputs, outs, results=results):
            for inp, res in zip(inputs, outs, strict=True):
                results[inp.config.index] = _gflops(inp.task, res)

        callbacks = [collect] + ([autotvm.callback.log_to_file(args.log)] if args.log else [])
        start = time.time()
        tuner = TUNERS[args.tuner](task)
        tuner.tune(args.trials or len(task.config_space), _option(args), callbacks=callbacks)
        default = results.get(task.default_index, 0.0)
        best = tuner.best_flops / 1e9
        print(f"{name:<22}{len(task.config_space):>6}{tuner.trials:>7}{default:>10.1f}{best:>10.1f}"
              f"{best / default if default else float('nan'):>7.2f}  {tuner.best_config} ({time.time() - start:.0f} s)")


def _curve(task, tuner_name, trials, option, seed, without_default=False):
    """Best GFLOP/s and the config holding it after each trial of one tuning run (``without_default``: the
    default config is not a candidate, so the curve shows the search alone)."""
    tuner = TUNERS[tuner_name](task, seed=seed)
    if without_default:
        tuner.visited.add(task.default_index)
    curve = []

    def record(tuner, inputs, results):
        curve.extend([(tuner.best_flops / 1e9, tuner.best_config)] * len(inputs))

    tuner.tune(trials, option, callbacks=[record])
    return curve


def _remeasure(task, configs, option, rounds):
    """Median GFLOP/s of each config over ``rounds`` rounds that measure all of them in turn (the same load for
    each). A tuner's best is the maximum of many noisy measurements, so it overstates that config's speed; this
    compares configs without that bias."""
    from kiln.autotvm.measure import MeasureInput, create_measure_batch

    measure = create_measure_batch(task, option)
    inputs = [MeasureInput(task.target, task, c) for c in configs]
    rates = [[] for _ in configs]
    for _ in range(rounds):
        for rate, res in zip(rates, measure(inputs), strict=True):
            rate.append(_gflops(task, res))
    return [statistics.median(r) for r in rates]


def run_compare(args):
    trials = args.trials or 32
    makers = {"conv": ("resnet50_conv_14x14_256", lambda: conv_task(256, 256, 14, 3, 1, args.target)),
              "dense": ("bert_dense_128x768x3072", lambda: dense_task(128, 768, 3072, args.target))}
    tasks = {makers[kind][0]: makers[kind][1]() for kind in args.tasks.split(",")}
    checkpoints = sorted({c for c in (1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 500, trials) if c <= trials})
    for name, task in tasks.items():
        print(f"\n{name}: {task.name}, {len(task.config_space)} configs, {trials} trials per run, {args.seeds} seeds")
        if args.without_default:
            default = _curve(task, "random", 1, _option(args), 0)[0][0]  # its first candidate is the default
            print(f"the default config: {default:.1f} GFLOP/s; neither tuner measures it")
        curves = {t: [_curve(task, t, trials, _option(args), seed, args.without_default) for seed in range(args.seeds)]
                  for t in ("random", "xgb")}
        print(f"{'trials':>8}" + "".join(f"{t + ' GFLOP/s':>18}" for t in curves))
        for c in checkpoints:
            row = [statistics.mean(curve[min(c, len(curve)) - 1][0] for curve in runs) for runs in curves.values()]
            print(f"{c:>8}" + "".join(f"{v:>18.1f}" for v in row))
        for seed in range(args.seeds):
            final, final_config = curves["random"][seed][-1]
            target = final * (1 - args.tolerance)
            reached = {t: next((i + 1 for i, (v, _) in enumerate(runs[seed]) if v >= target), None)
                       for t, runs in curves.items()}
            print(f"  seed {seed}: random's final best {final:.1f} GFLOP/s after {len(curves['random'][seed])} "
                  f"trials; within {args.tolerance:.0%} of it: random after {reached['random']} trials, xgb after "
                  f"{reached['xgb'] or 'never'}")
            half = curves["xgb"][seed][len(curves["xgb"][seed]) // 2 - 1][1]
            random_rate, xgb_rate = _remeasure(task, [final_config, half], _option(args), args.remeasure)
            print(f"    re-measured side by side ({args.remeasure} rounds, median): random's final best "
                  f"{random_rate:.1f}, xgb's best after {trials // 2} trials {xgb_rate:.1f} GFLOP/s "
                  f"({xgb_rate / random_rate:.3f})")


def run_ray(args):
    from kiln.autotvm.measure import MeasureInput, create_measure_batch

    name = args.layers.split(",")[0]
    task = conv_task(*LAYERS[name], args.target)
    space = task.config_space
    valid = list(space.valid_indices())
    count = min(args.trials or len(valid), len(valid))
    configs = [space.get(int(i)) for i in sorted(np.random.default_rng(0).choice(valid, count, replace=False))]
    ray_runner = autotvm.RayRunner(address=None, number=args.number, repeat=args.repeat, timeout=60)
    batches = {"local": create_measure_batch(task, _option(args)),
               "ray": create_measure_batch(task, autotvm.measure_option(runner=ray_runner))}
    rates = {runner: {} for runner in batches}
    try:
        for start in range(0, len(configs), 8):  # alternate in batches: both runners see the same load
            inputs = [MeasureInput(task.target, task, c) for c in configs[start:start + 8]]
            for runner, measure in batches.items():
                for inp, res in zip(inputs, measure(inputs), strict=True):
                    rates[runner][inp.config.index] = _gflops(task, res)
    finally:
        ray_runner.shutdown()
    print(f"{name}: {task.name}, {len(configs)} of {len(valid)} configs, each measured by both runners")
    for runner, other in (("local", "ray"), ("ray", "local")):
        print(f"  {runner}'s five best (GFLOP/s {runner} / {other}):")
        for index in sorted(rates[runner], key=rates[runner].get, reverse=True)[:5]:
            print(f"    {rates[runner][index]:8.1f} {rates[other][index]:8.1f}  {space.get(index)}")
    order = sorted(rates["local"])
    local, remote = (np.argsort(np.argsort([rates[r][i] for i in order])) for r in ("local", "ray"))
    print(f"  Spearman rank correlation of the two measurements: {np.corrcoef(local, remote)[0, 1]:.3f}")
    best_local, best_ray = (max(rates[r], key=rates[r].get) for r in ("local", "ray"))
    print(f"  local's best measured by ray: {rates['ray'][best_local] / rates['ray'][best_ray]:.3f} of ray's best; "
          f"ray's best measured locally: {rates['local'][best_ray] / rates['local'][best_local]:.3f} of local's best")


def _time_build(mod, params, inputs, records, number):
    from kiln.contrib import graph_executor

    def build():
        with kiln.transform.PassContext(opt_level=3):
            return relay.build(mod, target="llvm", params=params)

    if records:
        with autotvm.apply_history_best(records):
            lib = build()
    else:
        lib = build()
    module = graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    for k, v in inputs.items():
        module.set_input(k, v)
    module.run()
    return module, lambda: _ms(module, number)


def _ms(module, number):
    start = time.perf_counter()
    for _ in range(number):
        module.run()
    return (time.perf_counter() - start) / number * 1e3


def run_model(args):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import onnx
    from model_zoo import random_inputs
    from model_zoo.mobile import mobilenet_v2

    model = mobilenet_v2(image=args.image, num_classes=100)
    with tempfile.TemporaryDirectory() as tmp:
        path, log = os.path.join(tmp, "model.onnx"), args.log or os.path.join(tmp, "records.json")
        onnx.save(model, path)
        command = [sys.executable, "-m", "kiln.cli", "tune", path, "-o", log, "--time-budget", str(args.time_budget),
                   "--trials", str(args.trials or 64), "--tuner", args.tuner if args.tuner != "gridsearch" else "xgb",
                   "--scheduler", args.scheduler, "--number", str(args.number), "--parallel", "2"]
        print("$ kiln", " ".join(command[3:]), flush=True)
        start = time.time()
        subprocess.run(command, check=True)
        print(f"tuning took {time.time() - start:.0f} s")
        mod, params = relay.frontend.from_onnx(model)
        inputs = random_inputs(model, np.random.default_rng(0))
        default, time_default = _time_build(mod, params, inputs, None, args.number)
        tuned, time_tuned = _time_build(mod, params, inputs, log, args.number)
        out_d, out_t = default.get_output(0).numpy(), tuned.get_output(0).numpy()
        np.testing.assert_allclose(out_t, out_d, rtol=1e-3, atol=1e-3)
        rounds = [(time_default(), time_tuned()) for _ in range(args.repeat)]  # alternate: same load for both
    d = statistics.median(r[0] for r in rounds)
    t = statistics.median(r[1] for r in rounds)
    print(f"mobilenet_v2 {args.image}x{args.image}: default {d:.2f} ms, tuned {t:.2f} ms, speed-up {d / t:.2f}x "
          f"(median of {args.repeat} alternating rounds of {args.number} runs; per round "
          + ", ".join(f"{a:.2f}/{b:.2f}" for a, b in rounds) + ")")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", default="layers", choices=("layers", "compare", "model", "ray"))
    parser.add_argument("--layers", default=",".join(LAYERS), help="comma-separated names among " + ", ".join(LAYERS))
    parser.add_argument("--target", default="llvm")
    parser.add_argument("--tuner", default="gridsearch", choices=tuple(TUNERS))
    parser.add_argument("--trials", type=int, default=0, help="measurements per layer / run (0: a mode's default)")
    parser.add_argument("--number", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=1, help="compare: runs per tuner")
    parser.add_argument("--without-default", action="store_true",
                        help="compare: the tuners do not measure the default config (the search alone)")
    parser.add_argument("--tolerance", type=float, default=0.01,
                        help="compare: how close to random's final best counts as reaching it (measurement noise)")
    parser.add_argument("--tasks", default="conv,dense", help="compare: conv, dense or both")
    parser.add_argument("--remeasure", type=int, default=10,
                        help="compare: rounds that re-measure random's final best and xgb's best at half the trials")
    parser.add_argument("--time-budget", type=float, default=180.0, help="model: seconds of tuning")
    parser.add_argument("--scheduler", default="gradient", choices=("gradient", "sequential"))
    parser.add_argument("--image", type=int, default=96, help="model: the image size")
    parser.add_argument("--log", help="append the records to this file")
    args = parser.parse_args(argv)
    print("load:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(), flush=True)
    {"layers": run_layers, "compare": run_compare, "model": run_model, "ray": run_ray}[args.mode](args)


if __name__ == "__main__":
    main()
