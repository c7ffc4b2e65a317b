"""``kiln compile``: an ONNX model (or a Relay module in the text format) to a deployable package (tvmc compile).

The steps, each printed with its time:

1. **import**: ``relay.frontend.from_onnx`` (or ``relay.parse``). The inputs fed are the graph inputs that are not
   initializers; ``--input-shapes`` fixes their shapes, and a dimension the model leaves symbolic without one is set
   to 1, with a note saying so. ``--desired-layout`` then converts the convolutions' layout (``ConvertLayout``).
2. **optimize**, 3. **lower**, 4. **codegen**: ``relay.build`` under a ``PassContext`` of ``--opt-level``,
   ``--pass-config`` and ``--disabled-pass``: the standard pipeline ending with FuseOps, then LowerTE (fused
   functions to TIR), then graph codegen and the target's code generator. An instrument on the context sees where
   one step ends and the next starts, so ``relay.build`` runs as any user's script runs it.
5. **package**: :func:`kiln.runtime.package.export_package` writes ``mod.so``, ``mod.json`` and ``mod.params`` into
   the ``--output`` tar.

``--dump-code relay,tir,c,ll,asm`` writes ``<output>.<format>`` files as tvmc does: the imported Relay module, the
lowered PrimFuncs, and the library's C source, LLVM IR or assembly. ``--tuning-records records.json`` (written by
``kiln tune``) builds each kernel with its best record (``autotvm.apply_history_best``); kernels without one keep
the default schedules.
"""

import argparse
import os
import pathlib
import time

from .. import autotvm, relay, transform
from ..error import KilnError
from ..ir.instrument import pass_instrument
from ..ir.module import IRModule
from ..ir.op import Op
from ..relay.build import resolve_build_target
from ..relay.expr import Call
from ..relay.expr_functor import post_order_visit
from ..relay.frontend.onnx import load_model, model_inputs, model_opset
from ..relay.function import Function
from ..runtime.package import export_package
from ..target.target import Target
from ..tir.function import PrimFunc
from .common import add_verbose, note, parse_input_shapes, parse_pass_config, parse_pass_names

DUMP_FORMATS = ("relay", "tir", "c", "ll", "asm")
MODEL_FORMATS = {".onnx": "onnx", ".relay": "relay", ".txt": "relay"}


def add_parser(commands):
    """Add ``kiln compile`` to the ``kiln`` subcommands."""
    cmd = commands.add_parser(
        "compile", help="compile an ONNX model or Relay text into a deployable package (module.tar)",
        description="Compile a model into a package holding the library, the graph JSON and the parameters "
                    "(mod.so, mod.json, mod.params), as tvmc compile does.",
        epilog="examples:\n  kiln compile model.onnx -o module.tar\n"
               '  kiln compile model.onnx --input-shapes "data:[1,3,224,224]" --target "llvm -mcpu=native" '
               "--dump-code relay,ll",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    cmd.add_argument("model", help="the model: an ONNX file (.onnx) or a module in the Relay text format (.relay)")
    cmd.add_argument("-o", "--output", default="module.tar", metavar="FILE",
                     help="the package to write (default module.tar)")
    cmd.add_argument("--model-format", choices=sorted(set(MODEL_FORMATS.values())),
                     help="the model's format (default: from the file name's suffix)")
    cmd.add_argument("--target", default="llvm", help='what to compile for: "llvm" (default), "c", '
                                                       '"llvm -mcpu=native", ...')
    cmd.add_argument("--input-shapes", metavar='"NAME:[D1,D2,...] ..."',
                     help='static shapes of ONNX inputs, e.g. "data:[1,3,224,224]" (symbolic dimensions not given '
                          "here are set to 1)")
    cmd.add_argument("-O", "--opt-level", type=int, default=3, metavar="N",
                     help="the PassContext opt_level (default 3)")
    cmd.add_argument("--pass-config", action="append", default=[], metavar="KEY=VALUE",
                     help="a PassContext config option, e.g. relay.FuseOps.max_depth=4 (repeatable)")
    cmd.add_argument("--disabled-pass", action="append", default=[], metavar="NAME[,NAME...]",
                     help="passes that must not run, e.g. AlterOpLayout,FoldScaleAxis (repeatable)")
    cmd.add_argument("--desired-layout", choices=("NCHW", "NHWC"),
                     help="convert the convolutions to this data layout before optimizing (ConvertLayout)")
    cmd.add_argument("--tuning-records", metavar="FILE",
                     help="tuning records (from kiln tune) whose best configs the kernels are built with")
    cmd.add_argument("--dump-code", default="", metavar="FORMATS",
                     help=f"write the code as <output>.<format>, formats among {','.join(DUMP_FORMATS)} "
                          "(c needs --target c, ll the llvm target)")
    add_verbose(cmd)
    cmd.set_defaults(handler=run_compile)


@pass_instrument
class BuildSteps:
    """Records when ``relay.build``'s optimization pipeline and LowerTE start and end, and the module each returns
    (the fused module, and the lowered one with its PrimFuncs)."""

    def __init__(self):
        self.times: dict = {}
        self.results: dict = {}

    def run_before_pass(self, mod, info):
        if info.name in ("RelayOptimize", "LowerTE"):
            self.times[info.name] = [time.perf_counter(), None]

    def run_after_pass(self, mod, info):
        if info.name in self.times and self.times[info.name][1] is None:
            self.times[info.name][1] = time.perf_counter()
            self.results[info.name] = mod

    def seconds(self, name) -> float:
        start, end = self.times[name]
        return end - start


def _model_format(path, given):
    if given:
        return given
    fmt = MODEL_FORMATS.get(pathlib.Path(path).suffix.lower())
    if fmt is None:
        raise KilnError(f"cannot tell the format of {path} from its suffix; pass --model-format onnx or relay")
    return fmt


def _dump_formats(text, target, target_text) -> list:
    formats = [f.strip() for f in text.split(",") if f.strip()]
    for fmt in formats:
        if fmt not in DUMP_FORMATS:
            raise KilnError(f"--dump-code: unknown format {fmt!r} (known: {', '.join(DUMP_FORMATS)})")
        needed = {"c": ("c", "C"), "ll": ("llvm", "LLVM IR")}.get(fmt)
        if needed and target.kind.name != needed[0]:
            raise KilnError(f"--dump-code {fmt}: the target {target_text} does not generate {needed[1]} (use --target "
                            f"{needed[0]})")
    return formats


def _count_calls(func, callee_type) -> int:
    """How many calls in ``func`` call a ``callee_type`` (an ``Op``, or a fused ``Function``)."""
    calls = []
    post_order_visit(func, lambda e: calls.append(e) if isinstance(e, Call) and isinstance(e.op, callee_type) else None)
    return len(calls)


def _import(args):
    """``(mod, params, description)`` of the model; notes on stderr for every symbolic dimension set to 1."""
    if _model_format(args.model, args.model_format) == "relay":
        with open(args.model, encoding="utf-8") as f:
            text = f.read()
        try:
            mod = relay.parse(text, source_name=args.model)
        except KilnError as exc:
            raise KilnError(f"{args.model}: {exc}") from exc
        return mod, {}, "Relay text"
    model = load_model(args.model)
    inputs = model_inputs(model, parse_input_shapes(args.input_shapes) if args.input_shapes else None)
    for item in inputs:
        for axis, symbol in item.chosen:
            note("compile", f"input {item.name!r}: symbolic dimension {symbol!r} (axis {axis}) set to 1; choose it "
                            f"with --input-shapes \"{item.name}:[...]\"")
    mod, params = relay.frontend.from_onnx(model, {i.name: i.shape for i in inputs})
    described = ", ".join(f"{i.name} {i.dtype}{list(i.shape)}" for i in inputs) or "none"
    return mod, params, f"ONNX opset {model_opset(model)}, inputs {described}"


def _convert_layout(mod, layout):
    seq = transform.Sequential([relay.transform.ConvertLayout({"nn.conv2d": [layout, "default"]})])
    with transform.PassContext(opt_level=3):
        return seq(mod)


def _dump(args, formats, imported, steps, lib):
    lowered = steps.results.get("LowerTE")
    for fmt in formats:
        if fmt == "relay":
            text = str(imported)
        elif fmt == "tir":
            prims = {gv: f for gv, f in lowered.functions.items() if isinstance(f, PrimFunc)} if lowered else {}
            text = str(IRModule(prims))
        else:
            text = lib.get_lib().get_source(fmt)
        if not text:
            raise KilnError(f"--dump-code {fmt}: the build produced no {fmt} code")
        path = f"{args.output}.{fmt}"
        with open(path, "w", encoding="utf-8") as f:
            f.write(text if text.endswith("\n") else text + "\n")
        print(f"  dumped     {path}")


def _step(name, seconds, what):
    print(f"  {name:<9s} {seconds:6.2f} s  {what}")


def run_compile(args) -> int:
    """``kiln compile``: see the module docstring."""
    fmt = _model_format(args.model, args.model_format)
    if not os.path.isfile(args.model):
        raise KilnError(f"no {'ONNX model' if fmt == 'onnx' else 'Relay text'} file at {args.model!r}")
    if fmt == "relay" and args.input_shapes:
        raise KilnError("--input-shapes applies to ONNX models; a Relay module's types fix its shapes")
    folder = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(folder):
        raise KilnError(f"--output {args.output}: the directory {folder} does not exist")
    target = resolve_build_target(Target(args.target), what="--target")
    formats = _dump_formats(args.dump_code, target, args.target)
    disabled = parse_pass_names(args.disabled_pass)
    config = parse_pass_config(args.pass_config)
    if args.tuning_records is not None:
        if not os.path.isfile(args.tuning_records):
            raise KilnError(f"--tuning-records: no such file {args.tuning_records}")
        records = list(autotvm.record.load_from_file(args.tuning_records))
        note("compile", f"--tuning-records {args.tuning_records}: {len(records)} records; each kernel with a "
                        "record for this target is built with the best, the others with the default schedules")
    print(f"kiln compile: {args.model} -> {args.output} (target {args.target!r}, opt_level {args.opt_level})")
    start = time.perf_counter()
    mod, params, description = _import(args)
    if args.desired_layout:
        mod = _convert_layout(mod, args.desired_layout)
    _step("import", time.perf_counter() - start, description)

    steps = BuildSteps()
    start = time.perf_counter()
    dispatch = autotvm.apply_history_best(records if args.tuning_records is not None else [])
    with dispatch, transform.PassContext(opt_level=args.opt_level, disabled_pass=disabled, config=config,
                                         instruments=[steps]):
        lib = relay.build(mod, target=target, params=params)
    total = time.perf_counter() - start
    fused, lowered = steps.results.get("RelayOptimize"), steps.results.get("LowerTE")
    if fused is None or lowered is None:
        raise KilnError("relay.build ran no RelayOptimize or LowerTE pass; the build steps cannot be timed")
    kernels = sum(isinstance(f, PrimFunc) for f in lowered.functions.values())
    _step("optimize", steps.seconds("RelayOptimize"),
          f"{_count_calls(mod['main'], Op)} operator calls -> {_count_calls(fused['main'], Function)} calls of fused "
          f"functions")
    _step("lower", steps.seconds("LowerTE"), f"{kernels} distinct kernels (TIR)")
    codegen = total - steps.seconds("RelayOptimize") - steps.seconds("LowerTE")
    _step("codegen", codegen, f"the graph JSON, and the kernels compiled for {target.kind.name} into one library")

    start = time.perf_counter()
    export_package(lib, args.output)
    size = os.path.getsize(args.output)
    _step("package", time.perf_counter() - start, f"{args.output} ({size / 1e6:.1f} MB: mod.so, mod.json, mod.params)")
    _dump(args, formats, mod, steps, lib)
    return 0
