"""The mixed-dtype differential fuzzer: random well-typed Relay graphs (:mod:`.fuzz_graph`) over bool, 8/16/32/64-bit
integers and float16/32/64, built with ``relay.build`` for every target and opt_level asked for and compared with the
reference interpreter (numpy).

Each graph is replayed by its seed. A run reports three kinds of findings, which should all be zero:

* ``build error``: ``relay.build`` raised;
* ``crash``: the built module raised while running;
* ``mismatch``: an output differs from the reference: in dtype or shape, in any element of an integer or bool
  output or of a float computed exactly (:mod:`.fuzz_values`), or beyond a float16/32/64 tolerance otherwise.

The generator only builds graphs whose every result kiln defines, so the reference raising is a fault of the fuzzer
(reported as ``invalid graph``). Usage::

    python -m kiln.relay.testing.fuzz --graphs 2000              # seeds 0..1999, llvm and c, opt_level 0 and 3
    python -m kiln.relay.testing.fuzz --replay 1234 --verbose    # one graph: its IR and what went wrong
    python -m kiln.relay.testing.fuzz --graphs 500 --vm          # also on the VM, with run-time If, and with
                                                                 # every input's first dimension relay.Any
"""

import argparse
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from ...error import TypeInferenceError
from ...ir.module import IRModule
from ...ir.op import Op
from ...ir.transform import PassContext
from ...ir.type import Any, TensorType, TupleType
from ...runtime.device import cpu
from ...runtime.vm import VirtualMachine
from ..backend.vm import compile as vm_compile
from ..build import build
from ..expr import Call, If, Tuple, Var, bind
from ..expr_functor import post_order_visit
from ..function import Function
from ..interpreter import create_executor
from ..transform.infer_type import infer_type
from .fuzz_graph import GraphGenerator

TOLERANCE = {"float16": 3e-2, "float32": 1e-4, "float64": 1e-9}
"""Relative (and, scaled by the output's magnitude, absolute) tolerance of outputs computed with rounding: that of
the coarsest float type an output is computed from, whose rounding errors a wider output carries along."""
KINDS = ("mismatch", "crash", "build error", "invalid graph")


@dataclass
class Finding:
    """One failure: the graph's seed, where it happened, what kind and the message."""

    seed: int
    target: str
    opt_level: int
    kind: str
    message: str

    def __str__(self):
        return (f"seed {self.seed} ({self.target}, opt_level {self.opt_level}): {self.kind}: {self.message}\n"
                f"  replay: python -m kiln.relay.testing.fuzz --replay {self.seed} --verbose"
                f"{' --vm' if ', vm' in self.target else ''}")


@dataclass
class Report:
    """The outcome of a fuzzing run."""

    graphs: int = 0
    builds: int = 0
    findings: list = field(default_factory=list)
    seconds: float = 0.0

    def count(self, kind) -> int:
        return sum(f.kind == kind for f in self.findings)

    def summary(self) -> str:
        counts = ", ".join(f"{self.count(k)} {k}{'es' if k in ('mismatch', 'crash') else 's'}" for k in KINDS)
        return f"{self.graphs} graphs, {self.builds} builds in {self.seconds:.0f} s: {counts}"


def random_graph(seed, max_ops=12, control_flow=False):
    """``(IRModule, inputs, params, exact)`` of graph ``seed`` (see :meth:`GraphGenerator.generate`)."""
    generator = GraphGenerator(seed, max_ops, control_flow)
    func, inputs, params, exact = generator.generate()
    mod = IRModule.from_expr(func)
    for gv, loop in generator.globals.items():
        mod[gv] = loop
    return mod, inputs, params, exact


def _is_dynamic_call(e) -> bool:
    return isinstance(e, Call) and isinstance(e.op, Op) and e.op.name.startswith("dyn.")


def _needs_vm(mod) -> bool:
    """Whether the graph branches, loops or has a ``dyn.*`` operator (only the VM runs it)."""
    found = []
    post_order_visit(mod["main"], lambda e: found.append(e) if isinstance(e, If) or _is_dynamic_call(e) else None)
    return bool(found) or len(mod.functions) > 1


def _outputs(value) -> list:
    values = value if isinstance(value, tuple) else (value,)
    return [v.numpy() for v in values]


def coarsest_floats(mod) -> list:
    """For each output of ``mod``, the float dtype with the least precision among the values it is computed from
    (float64 when none is float16 or float32), in either branch when ``main`` ends in an ``If``."""
    body = infer_type(mod)["main"].body
    branches = [body.true_branch, body.false_branch] if isinstance(body, If) else [body]
    coarsest = []
    for outputs in zip(*[b.fields if isinstance(b, Tuple) else (b,) for b in branches], strict=True):
        seen = set()
        for output in outputs:
            post_order_visit(output, lambda e, seen=seen: seen.update(
                t.dtype for t in _tensor_types(getattr(e, "checked_type_", None))))
        coarsest.append(next((d for d in ("float16", "float32") if d in seen), "float64"))
    return coarsest


def _tensor_types(ttype):
    if isinstance(ttype, TupleType):
        return [t for f in ttype.fields for t in _tensor_types(f)]
    return [ttype] if isinstance(ttype, TensorType) else []


def compare(got, want, exact, coarsest="float64") -> str:
    """Why ``got`` is not ``want`` (empty when it is): ``exact`` outputs must be equal element for element, others
    within the tolerance of ``coarsest`` (or of their own dtype, if coarser)."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"got {got.dtype}{list(got.shape)}, expected {want.dtype}{list(want.shape)}"
    if want.dtype.kind != "f" or exact:
        ok = np.array_equal(got, want, equal_nan=want.dtype.kind == "f")
    else:
        finite = np.abs(want[np.isfinite(want)].astype("float64"))
        tol = max(TOLERANCE[want.dtype.name], TOLERANCE[coarsest])
        scale = max(1.0, float(finite.max())) if finite.size else 1.0
        ok = np.allclose(got.astype("float64"), want.astype("float64"), rtol=tol, atol=tol * scale, equal_nan=True)
    if ok:
        return ""
    bad = np.argwhere(got != want)[:1] if got.shape else [()]
    where = tuple(int(i) for i in bad[0]) if len(bad) else ()
    return f"at {list(where)} got {got[where]!r}, expected {want[where]!r} ({want.dtype}{list(want.shape)})"


def check_graph(seed, targets=("llvm", "c"), opt_levels=(0, 3), max_ops=12, vm=False):
    """Build graph ``seed`` for every target and opt_level; the findings and the number of builds.

    With ``vm``, the graph may branch on a run-time condition, and it is also compiled with ``relay.vm.compile``
    and run by the VM, as it is and with the first dimension of every input made ``relay.Any``
    (:func:`with_dynamic_inputs`; one executable then serves the inputs' sizes, which it learns at run time); a
    branching graph, which ``relay.build`` refuses, runs on the VM only."""
    try:
        mod, inputs, params, exact = random_graph(seed, max_ops, control_flow=vm)
        args = {**inputs, **params}
        want = _outputs(create_executor("debug", mod=mod).evaluate()(*[args[p.name_hint] for p in mod["main"].params]))
        coarsest = coarsest_floats(mod)
    except Exception as exc:  # noqa: BLE001  (a failure of the generator or the reference is reported, not raised)
        return [Finding(seed, "reference", -1, "invalid graph", f"{type(exc).__name__}: {exc}")], 0
    executors = (["vm", "dynamic"] if vm else []) + ([] if vm and _needs_vm(mod) else ["graph"])
    dynamic = with_dynamic_inputs(mod, inputs) if vm else None
    findings, builds = [], 0
    for executor in executors:
        if executor == "dynamic" and dynamic is None:
            continue  # an operator of the graph does not accept a dynamic dimension (a refusal, not a fault)
        for target in targets:
            for level in opt_levels:
                builds += 1
                module = dynamic if executor == "dynamic" else mod
                finding = _check_build(seed, module, inputs, params, exact, want, target, level, coarsest, executor)
                if finding is not None:
                    findings.append(finding)
    return findings, builds


def with_dynamic_inputs(mod, inputs):
    """``mod`` with the first dimension of each input named in ``inputs`` made ``relay.Any`` (not the shape operands
    of ``dyn.*`` operators), typed; None when a type relation refuses that (it says so with a TypeInferenceError),
    or when the graph means something else with that dimension unknown: ``squeeze`` without axes drops only the
    dimensions known to be 1, so an output may lose fewer axes (its rank then differs from the static graph's)."""
    main = mod["main"]
    params, binds = [], {}
    shapes = _shape_operands(main)
    for p in main.params:
        ttype = p.checked_type_
        if p.name_hint in inputs and p not in shapes and isinstance(ttype, TensorType) and ttype.ndim:
            new = Var(p.name_hint, TensorType((Any(), *ttype.shape[1:]), ttype.dtype))
            binds[p] = new
            p = new
        params.append(p)
    dynamic = IRModule({gv: f for gv, f in mod.functions.items() if gv.name_hint != "main"})
    dynamic["main"] = Function(params, bind(main.body, binds))
    try:
        dynamic = infer_type(dynamic)
    except TypeInferenceError:
        return None
    ranks = [[t.ndim for t in _tensor_types(m["main"].checked_type_.ret_type)] for m in (infer_type(mod), dynamic)]
    return dynamic if ranks[0] == ranks[1] else None


def _shape_operands(func) -> set:
    """The variables given to ``dyn.*`` operators as their shape operands (every argument after the data): their
    length is the rank of a result, so they keep it static."""
    found: set = set()
    post_order_visit(func, lambda e: found.update(a for a in e.args[1:] if isinstance(a, Var))
                     if _is_dynamic_call(e) else None)
    return found


def _run_graph(mod, inputs, params, target):
    lib = build(mod, target=target, params=params)

    def run():
        executor = lib["default"](cpu(0))  # a runtime GraphExecutor (contrib's GraphModule sits above relay)
        for name, value in inputs.items():
            executor.set_input(name, value)
        executor.run()
        return [executor.get_output(i).numpy() for i in range(executor.get_num_outputs())]

    return run


def _run_vm(mod, inputs, params, target):
    exe = vm_compile(mod, target=target, params=params)

    def run():
        machine = VirtualMachine(exe, cpu(0))
        machine.invoke_stateful("main", **inputs)
        return [out.numpy() for out in machine.get_outputs()]

    return run


def _check_build(seed, mod, inputs, params, exact, want, target, level, coarsest, executor="graph"):
    where = target if executor == "graph" else f"{target}, {'vm' if executor == 'vm' else 'vm with dynamic inputs'}"
    try:
        with PassContext(opt_level=level):
            run = (_run_graph if executor == "graph" else _run_vm)(mod, inputs, params, target)
    except Exception as exc:  # noqa: BLE001
        return Finding(seed, where, level, "build error", f"{type(exc).__name__}: {_first_line(exc)}")
    try:
        got = run()
    except Exception as exc:  # noqa: BLE001
        return Finding(seed, where, level, "crash", f"{type(exc).__name__}: {_first_line(exc)}")
    if len(got) != len(want):
        return Finding(seed, where, level, "mismatch", f"{len(got)} outputs, expected {len(want)}")
    for k, (g, w, e, c) in enumerate(zip(got, want, exact, coarsest, strict=True)):
        problem = compare(g, w, e, c)
        if problem:
            return Finding(seed, where, level, "mismatch", f"output {k}: {problem}")
    return None


def _first_line(exc) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else ""


def fuzz(graphs, seed=0, targets=("llvm", "c"), opt_levels=(0, 3), max_ops=12, log=None, vm=False, minutes=None,
         progress=100) -> Report:
    """Check graphs ``seed`` .. ``seed + graphs - 1``.

    Parameters
    ----------
    graphs : int
        How many graphs.
    seed : int
        The first graph's seed.
    targets, opt_levels : sequence
        What each graph is built for.
    max_ops : int
        The most operators a graph applies.
    log : callable, optional
        Called with each finding's text, and with a progress line every ``progress`` graphs.
    vm : bool, optional
        Also run every graph on the Relay VM, and let graphs branch on run-time conditions (:func:`check_graph`).
    minutes : float, optional
        A wall-clock budget: no graph is started after it (the report says how many were checked).
    progress : int
        Graphs between progress lines.

    Returns
    -------
    report : Report
    """
    report = Report()
    start = time.time()
    for s in range(seed, seed + graphs):
        if minutes is not None and time.time() - start > 60 * minutes:
            break
        findings, builds = check_graph(s, targets, opt_levels, max_ops, vm)
        report.graphs += 1
        report.builds += builds
        report.findings += findings
        if log is not None:
            for f in findings:
                log(str(f))
            if report.graphs % progress == 0:
                log(f"... {report.graphs} graphs, {len(report.findings)} findings, {time.time() - start:.0f} s")
    report.seconds = time.time() - start
    return report


def main(argv=None) -> int:
    """The command line (see the module docstring); exit status 1 when anything was found."""
    parser = argparse.ArgumentParser(prog="python -m kiln.relay.testing.fuzz", description=__doc__.split("\n\n")[0])
    parser.add_argument("--graphs", type=int, default=200, help="how many graphs (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="the first graph's seed (default 0)")
    parser.add_argument("--replay", type=int, default=None, help="check only the graph of this seed")
    parser.add_argument("--targets", default="llvm,c", help="comma-separated targets (default llvm,c)")
    parser.add_argument("--opt-levels", default="0,3", help="comma-separated opt_levels (default 0,3)")
    parser.add_argument("--max-ops", type=int, default=12, help="the most operators per graph (default 12)")
    parser.add_argument("--vm", action="store_true",
                        help="also run on the Relay VM, with graphs that branch on run-time conditions")
    parser.add_argument("--verbose", action="store_true", help="print each graph's IR with its findings")
    parser.add_argument("--minutes", type=float, default=None, help="start no graph after this many minutes")
    parser.add_argument("--progress", type=int, default=100, help="graphs between progress lines (default 100)")
    args = parser.parse_args(argv)
    targets = tuple(t for t in args.targets.split(",") if t)
    levels = tuple(int(x) for x in args.opt_levels.split(",") if x)
    first, count = (args.replay, 1) if args.replay is not None else (args.seed, args.graphs)

    def log(text):
        print(text, flush=True)
        if args.verbose and text.startswith("seed "):
            print(random_graph(int(text.split()[1]), args.max_ops, args.vm)[0], flush=True)

    report = fuzz(count, first, targets, levels, args.max_ops, log, args.vm, args.minutes, max(1, args.progress))
    if args.verbose and args.replay is not None and not report.findings:
        print(random_graph(args.replay, args.max_ops, args.vm)[0])
    print(report.summary())
    return 1 if report.findings else 0


if __name__ == "__main__":
    sys.exit(main())
