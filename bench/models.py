"""The model mix: kiln against ONNX Runtime on the same ONNX models, in one run, interleaved.

Two groups of models, batch 1, float32:

- ``light``: the nine CNNs the onnx wheel ships for its backend tests (``onnx/backend/test/data/light``: AlexNet,
  DenseNet-121, Inception v1/v2, ResNet-50, ShuffleNet, SqueezeNet, VGG-19, ZFNet-512; the weights they carry).
- ``modern``: architectures built with ``onnx.helper`` by ``bench/model_zoo`` with their published layer shapes and
  seeded random weights (MobileNetV2, MobileNetV3-Large/-Small, EfficientNet-B0, YOLOv5s at 640x640, a CRNN with two
  bidirectional LSTMs, BERT-base at sequence 128, ViT-B/16).

Each model is imported with ``relay.frontend.from_onnx``, built by ``relay.build`` at opt_level 3 for ``--target``
with an empty compile cache (``KILN_CACHE_DIR`` pointed at a fresh directory, so the build time is a cold one) and
run by the graph executor; ONNX Runtime runs the same bytes with its CPU provider and ``--threads`` intra-op threads.
Outputs are compared first (the largest difference relative to the largest magnitude of each reference output, of
the default and the tuned build; rows above 1e-4 are flagged). Rounds alternate between the two runtimes so both see
the same machine load; each figure is the best round's milliseconds.

Printed per model: its size (GFLOP of convolutions, matrix products and recurrent layers, counted on the ONNX graph;
millions of parameters), kiln ms, ORT ms, their ratio (below 1: kiln is faster), kiln's GFLOP/s, the cold compile
seconds (import and build) and the relative difference; then the geometric mean of the ratios per group. A model
kiln cannot import, build (within ``--compile-timeout`` seconds) or run is printed as ``FAILED: <reason>`` and left
out of the means; the run goes on.

``--tuning-records DIR`` also builds each model that has records in ``DIR/<name>.json`` (``kiln tune``'s output) with
``autotvm.apply_history_best`` and times that build in the same rounds, after the default one: the row then also
gives the tuned ms and the tuned build's ratio to ONNX Runtime, so default and tuned are compared under the same load.

``--contention`` starts a separate process that keeps one core busy while both runtimes are timed. ``--save DIR``
writes every model as ``DIR/<name>.onnx``. ``--per-kernel N`` prints the N slowest kernels of each kiln model, each
timed alone on arguments of the graph's shapes.

Run: ``python bench/models.py [--group light|modern|all] [--models mobilenet_v2,resnet50] [--target llvm]
[--rounds 5] [--number 3] [--threads 0] [--settle 0.2] [--contention] [--save DIR] [--per-kernel N]
[--compile-timeout 600] [--tuning-records DIR]``
"""

import argparse
import contextlib
import functools
import math
import multiprocessing
import os
import pathlib
import signal
import tempfile
import time
from dataclasses import dataclass

import numpy as np
import onnx
from _common import best_ms, onnx_size, per_kernel, relative_error
from model_zoo import MODERN, ZooModel

import kiln
from kiln import autotvm, relay
from kiln.contrib import graph_executor

LIGHT_NAMES = ("bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50", "shufflenet", "squeezenet",
               "vgg19", "zfnet512")
#: The outputs of the two runtimes should agree to this (relative to the output's magnitude); larger is flagged.
TOLERANCE = 1e-4


def light_model(name):
    """One of the onnx wheel's light models as a ModelProto."""
    path = pathlib.Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / f"light_{name}.onnx"
    return onnx.load(str(path))


GROUPS = {"light": tuple(ZooModel(name, functools.partial(light_model, name)) for name in LIGHT_NAMES),
          "modern": MODERN}


@dataclass
class Result:
    """What one model measured; ``failure`` holds the reason when kiln (or ONNX Runtime) could not run it."""

    name: str
    gflop: float
    mparams: float
    kiln_ms: float = math.nan
    ort_ms: float = math.nan
    compile_s: float = math.nan
    error: float = math.nan
    tuned_ms: float = math.nan
    failure: str | None = None

    def row(self):
        """The model's line of the table."""
        size = f"{self.name:20s} {self.gflop:7.2f} {self.mparams:8.2f}"
        if self.failure:
            return f"{size}  FAILED: {self.failure}"
        ratio, rate = self.kiln_ms / self.ort_ms, self.gflop / (self.kiln_ms * 1e-3)
        flag = f"  > {TOLERANCE:g}" if not self.error <= TOLERANCE else ""
        tuned = f"  tuned {self.tuned_ms:.2f} ms, ratio {self.tuned_ms / self.ort_ms:.2f}" if self.tuned else ""
        return (f"{size} {self.kiln_ms:9.2f} {self.ort_ms:9.2f} {ratio:6.2f} {rate:8.1f} {self.compile_s:8.1f} "
                f"{self.error:8.1e}{flag}{tuned}")

    @property
    def tuned(self):
        """Whether a build with tuning records was timed too."""
        return not math.isnan(self.tuned_ms)


HEADER = (f"{'model':20s} {'GFLOP':>7s} {'Mparams':>8s} {'kiln ms':>9s} {'ORT ms':>9s} {'ratio':>6s} {'GFLOP/s':>8s} "
          f"{'build s':>8s} {'rel.err':>8s}")


class CompileTimeout(BaseException):
    """A build overran ``--compile-timeout``. A BaseException, so that no ``except Exception`` inside kiln swallows
    it on its way out."""


@contextlib.contextmanager
def time_limit(seconds):
    """Raise :class:`CompileTimeout` in the block after ``seconds`` (SIGALRM; the main thread only)."""
    def expire(signum, frame):
        raise CompileTimeout(f"compile took longer than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def cold_compile_cache():
    """Point kiln's compile cache at a fresh directory for the block (removed afterwards), so builds start cold."""
    previous = os.environ.get("KILN_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="kiln-bench-cache-") as cache:
        os.environ["KILN_CACHE_DIR"] = cache
        try:
            yield
        finally:
            if previous is None:
                del os.environ["KILN_CACHE_DIR"]
            else:
                os.environ["KILN_CACHE_DIR"] = previous


def one_line(exc):
    """``Type: first line of the message`` of an exception, with the notes kiln adds (``in pass X``)."""
    lines = str(exc).strip().splitlines()
    text = f"{type(exc).__name__}: {lines[0] if lines else ''}"
    notes = "; ".join(getattr(exc, "__notes__", ()))
    text = f"{text} ({notes})" if notes else text
    return text if len(text) <= 240 else text[:237] + "..."


class Stage:
    """The step a build is at (``import``, ``build``, ``run``), named in the row when it fails."""

    def __init__(self, prefix=""):
        self.prefix, self.name = prefix, "import"

    def __str__(self):
        return self.prefix + self.name


def build_and_run(model, feeds, target, stage, records=None):
    """Import ``model``, build it at opt_level 3 (with the best of ``records``, a tuning log, when given), run it once
    on ``feeds``, keeping ``stage`` up to date; the graph module, the factory module and the outputs."""
    mod, params = relay.frontend.from_onnx(model, {name: value.shape for name, value in feeds.items()})
    stage.name = "build"
    with contextlib.ExitStack() as stack:
        if records is not None:
            stack.enter_context(autotvm.apply_history_best(str(records)))
        with kiln.transform.PassContext(opt_level=3):
            lib = relay.build(mod, target=target, params=params)
    stage.name = "run"
    m = graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    m.set_input(**feeds)
    m.run()
    return m, lib, [m.get_output(i).numpy() for i in range(m.get_num_outputs())]


def measure(zoo_model, args, ort):
    """Build, check and time one model on both runtimes.

    Parameters
    ----------
    zoo_model : model_zoo.ZooModel
        The model to build at its published size.
    args : argparse.Namespace
        The command line.
    ort : module
        ``onnxruntime``.

    Returns
    -------
    Result
        Also printed, as a row of the table.
    """
    model = zoo_model.build()
    if args.save is not None:
        onnx.save(model, str(args.save / f"{zoo_model.name}.onnx"))
    flops, parameters = onnx_size(model)
    result = Result(zoo_model.name, flops / 1e9, parameters / 1e6)

    def failed(reason):
        result.failure = reason
        print(result.row(), flush=True)
        return result

    feeds = zoo_model.make_inputs(model, np.random.default_rng(0))
    try:
        options = ort.SessionOptions()
        options.intra_op_num_threads = args.threads
        options.log_severity_level = 3  # errors only: the light models' unused initializers draw warnings
        session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        want = session.run(None, feeds)
    except Exception as exc:  # a model ONNX Runtime rejects has no reference: report it like a kiln failure
        return failed(f"ONNX Runtime: {one_line(exc)}")
    records = args.tuning_records / f"{zoo_model.name}.json" if args.tuning_records else None
    records = records if records is not None and records.is_file() else None
    stage = Stage()
    with cold_compile_cache():
        try:
            with time_limit(args.compile_timeout):
                start = time.perf_counter()
                m, lib, got = build_and_run(model, feeds, args.target, stage)
                result.compile_s = time.perf_counter() - start
            stage, tuned, tuned_got = Stage("tuned "), None, got
            if records:
                with time_limit(args.compile_timeout):
                    tuned, _, tuned_got = build_and_run(model, feeds, args.target, stage, records)
        except (Exception, CompileTimeout) as exc:
            return failed(f"{stage}: {one_line(exc)}")
        result.error = max(relative_error(got, want), relative_error(tuned_got, want))
        timed = {"kiln": m.run, "ort": lambda: session.run(None, feeds)} | ({"tuned": tuned.run} if tuned else {})
        rounds = {name: [] for name in timed}
        for _ in range(args.rounds):
            for name, run in timed.items():
                rounds[name].append(best_ms(run, args.number, args.settle))
        result.kiln_ms, result.ort_ms = min(rounds["kiln"]), min(rounds["ort"])
        result.tuned_ms = min(rounds["tuned"]) if tuned else math.nan
        print(result.row(), flush=True)
        if args.per_kernel:
            per_kernel(lib, limit=args.per_kernel)
    return result


def geometric_mean(values):
    """The geometric mean of positive numbers."""
    return math.exp(sum(map(math.log, values)) / len(values))


def _spin(stop):
    while not stop.is_set():
        sum(range(10000))


def _parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--group", choices=("light", "modern", "all"), default="all")
    parser.add_argument("--models", default="", help="comma-separated model names (of any group): only these")
    parser.add_argument("--target", default="llvm")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--number", type=int, default=3, help="inferences per timed round")
    parser.add_argument("--threads", type=int, default=0, help="onnxruntime intra-op threads (0: its default)")
    parser.add_argument("--settle", type=float, default=0.2, help="idle seconds before each timed round")
    parser.add_argument("--contention", action="store_true", help="keep one core busy with another process")
    parser.add_argument("--save", type=pathlib.Path, metavar="DIR", help="write each model to DIR/<name>.onnx")
    parser.add_argument("--per-kernel", type=int, default=0, metavar="N",
                        help="print the N slowest kernels of each kiln model (each timed alone)")
    parser.add_argument("--compile-timeout", type=float, default=600.0, metavar="S",
                        help="report a model whose import and build take longer than S seconds as failed")
    parser.add_argument("--tuning-records", type=pathlib.Path, metavar="DIR",
                        help="also time the build with DIR/<name>.json's best records (kiln tune's output)")
    args = parser.parse_args()
    groups = list(GROUPS) if args.group == "all" else [args.group]
    known = {model.name for group in groups for model in GROUPS[group]}
    wanted = [name for name in args.models.split(",") if name]
    unknown = sorted(set(wanted) - known)
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; --group {args.group} has {', '.join(sorted(known))}")
    args.selection = {group: [m for m in GROUPS[group] if not wanted or m.name in wanted] for group in groups}
    if args.save is not None:
        args.save.mkdir(parents=True, exist_ok=True)
    return args


def main():
    args = _parse_args()
    import onnxruntime as ort

    target = kiln.target.Target(args.target)
    print(f"target {target}: {target.cpu_info!r}; host {kiln.target.cpu.host_cpu()!r}; onnxruntime {ort.__version__}"
          f" ({args.threads or 'default'} threads){'; one core kept busy' if args.contention else ''}")
    stop = multiprocessing.Event()
    busy = multiprocessing.Process(target=_spin, args=(stop,), daemon=True) if args.contention else None
    if busy is not None:
        busy.start()
    results = {}
    try:
        for group, models in args.selection.items():
            if not models:
                continue
            print(f"\n{group}\n{HEADER}", flush=True)
            results[group] = []
            for zoo_model in models:
                results[group].append(measure(zoo_model, args, ort))
    finally:
        if busy is not None:
            stop.set()
            busy.join()
    print()
    for group, group_results in [*results.items(), ("all", [r for rs in results.values() for r in rs])]:
        ratios = [r.kiln_ms / r.ort_ms for r in group_results if not r.failure]
        if group == "all" and len(results) < 2 or not ratios:
            continue
        print(f"geometric mean kiln/ORT, {group}: {geometric_mean(ratios):.2f} "
              f"({len(ratios)} of {len(group_results)} models)")
        tuned = [r for r in group_results if not r.failure and r.tuned]
        if tuned:
            default = geometric_mean([r.kiln_ms / r.ort_ms for r in tuned])
            print(f"  its {len(tuned)} tuned models: default {default:.2f}, "
                  f"tuned {geometric_mean([r.tuned_ms / r.ort_ms for r in tuned]):.2f}")


if __name__ == "__main__":
    main()
