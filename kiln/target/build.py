"""``kiln.build``: from a TE schedule or an IRModule of PrimFuncs to a runtime Module of native functions.

The pipeline (TVM's ``tvm.build``):

1. a TE schedule is lowered with ``kiln.lower(s, args, name)``; a PrimFunc becomes a one-function IRModule;
2. the build phase of the TIR pipeline runs on every PrimFunc (:mod:`kiln.tir.transform.pipeline`: intrinsics
   lowered, the packed calling convention of :mod:`kiln.target.codegen_common`, allocations placed, and for C
   float16 and vector widths legalized);
3. the target's code generator, found in the global registry as ``"target.build.<kind>"`` (so a caller never
   imports a backend it does not use), prints and compiles the module and links a shared library.

``"target.build.c"`` lives here; ``"target.build.llvm"`` in :mod:`kiln.target.codegen_llvm`. Both go through
:func:`make_library_module`, which links the objects with the runtime helper and the library metadata into a cached
``.so`` and loads it. ``"target.link_library"`` is what ``Module.export_library`` links with.
"""

import json
import os
import pathlib
import tempfile

from ..error import CodegenError, KilnError
from ..ir.module import IRModule
from ..ir.transform import Sequential
from ..runtime.module import LibraryModule
from ..runtime.packed_func import get_global_func, register_func
from ..tir.function import PrimFunc
from ..tir.transform import pipeline
from . import compile_cache, compiler
from .codegen_c import CSourceGenerator
from .codegen_common import function_info, function_symbol, is_packed, param_specs
from .cpu import required_features
from .parallel import deal, fork_map
from .target import Target


def _resolve_target(target, target_host=None) -> Target:
    if target is None:
        target = Target.current() or Target("llvm")
    if isinstance(target, dict) and len(target) == 1 and not {"kind"} & set(target):
        target = next(iter(target))  # TVM's {target: module} form with a single entry
    if not isinstance(target, Target):
        target = Target(target)
    if target.kind.name not in ("llvm", "c"):
        raise KilnError(f"kiln.build: target kind {target.kind.name!r} is not supported: kiln generates code for llvm "
                        f"and c only (a GPU kind only describes its device)")
    if target_host is not None:
        target = target.with_host(target_host)
    return target


def _to_module(inputs, args, name, binds) -> IRModule:
    """The IRModule to compile: a schedule, a PrimFunc or an IRModule is lowered with ``kiln.lower`` (as TVM's
    ``build`` does), unless its functions are already packed or every one of them is ``kiln.lower``'s own output
    (lowering that again would change nothing: ``kiln.build(kiln.lower(s, args))`` lowers once)."""
    lower, is_lowered = _lower_function()
    if isinstance(inputs, IRModule):
        _check_prim_funcs(inputs)
    if isinstance(inputs, IRModule | PrimFunc):
        funcs = list(inputs.functions.values()) if isinstance(inputs, IRModule) else [inputs]
        packed = any(isinstance(f, PrimFunc) and is_packed(f) for f in funcs)
        if lower is not None and not packed and not all(is_lowered(f) for f in funcs):
            mod = lower(inputs, name=name)
        elif isinstance(inputs, PrimFunc):  # named ``name``, as TVM's lower names a PrimFunc
            mod = IRModule({name: inputs.with_fields(attrs=inputs.attrs.with_attr("global_symbol", name))})
        else:
            mod = inputs
    else:
        if lower is None:
            raise KilnError(f"kiln.build: cannot build a {type(inputs).__name__} (kiln.lower is not available); "
                            f"pass an IRModule or a tir.PrimFunc")
        if args is None:
            raise KilnError("kiln.build: building a schedule needs `args`, the tensors of the function's signature")
        mod = lower(inputs, args, name=name, binds=binds)
    _check_prim_funcs(mod)
    return mod


def _check_prim_funcs(mod):
    prim = {gv: f for gv, f in mod.functions.items() if isinstance(f, PrimFunc)}
    if len(prim) != len(mod.functions):
        others = [str(getattr(gv, "name_hint", gv)) for gv in mod.functions if gv not in prim]
        raise KilnError(f"kiln.build: only tir.PrimFuncs can be compiled; the module also holds {', '.join(others)} "
                        f"(use relay.build for Relay functions)")
    if not prim:
        raise KilnError("kiln.build: the module holds no tir.PrimFunc to compile")


def _lower_function():
    """``(kiln.lower, is_lowered)`` from the TE layer, or ``(None, None)`` when that layer is unavailable."""
    try:
        from ..te import lower
        from ..te.lower import is_lowered
    except ImportError:
        return None, None
    return lower, is_lowered


def build_passes(mod, target) -> IRModule:
    """Run the build phase of the TIR pipeline for ``target`` on ``mod``
    (:func:`kiln.tir.transform.pipeline.build_passes`)."""
    return Sequential(pipeline.build_passes(target), name="tir.build")(_record_arg_info(mod))


def _record_arg_info(mod):
    """Attach ``kiln.arg_info`` (the parameters before MakePackedAPI) to each function, for the runtime's use."""
    out = None
    for gv, func in mod.functions.items():
        if isinstance(func, PrimFunc) and not is_packed(func) and "kiln.arg_info" not in func.attrs:
            out = out or mod.shallow_copy()
            out[gv] = func.with_fields(attrs=func.attrs.with_attr("kiln.arg_info", tuple(param_specs(func))))
    return out or mod


def build(inputs, args=None, target=None, target_host=None, runtime=None, name="default_function", binds=None):
    """Compile a schedule, PrimFunc or IRModule of PrimFuncs for ``target`` (TVM's ``tvm.build``).

    Parameters
    ----------
    inputs : te.Schedule, tir.PrimFunc or IRModule
        What to compile.
    args : list of te.Tensor, optional
        The function's arguments (needed for a schedule).
    target : str or Target, optional
        ``"llvm"`` (default, or the current target), ``"c"``, ``"llvm -mcpu=native -num-cores=2"`` ...
    target_host : str or Target, optional
        Accepted for TVM compatibility (CPU targets are their own host).
    name : str
        The function's name (for a schedule or an unnamed PrimFunc).
    binds : dict, optional
        Tensor -> Buffer bindings, passed on to ``kiln.lower``.

    Returns
    -------
    module : kiln.runtime.Module
        ``module[name](*arrays)`` runs the function; ``module(*arrays)`` runs the entry function.

    Examples
    --------
    >>> m = kiln.build(s, [A, B], "llvm", name="addone")        # doctest: +SKIP
    >>> m["addone"](a, b)                                       # doctest: +SKIP
    """
    target = _resolve_target(target, target_host)
    mod = _to_module(inputs, args, name, binds)
    with target:
        mod = build_passes(mod, target)
    fbuild = get_global_func(f"target.build.{target.kind.name}", allow_missing=True)
    if fbuild is None:
        raise KilnError(f"kiln.build: no code generator registered for target kind {target.kind.name!r} "
                        f"(global function target.build.{target.kind.name})")
    return fbuild(mod, target)


def prim_funcs(mod):
    """``(symbol, PrimFunc)`` of every PrimFunc in ``mod``, in module order; raises on a duplicate symbol."""
    out, seen = [], set()
    for gv, func in mod.functions.items():
        if not isinstance(func, PrimFunc):
            continue
        symbol = function_symbol(gv, func)
        if symbol in seen:
            raise CodegenError(f"two functions are named {symbol!r}")
        seen.add(symbol)
        out.append((symbol, func))
    return out


def entry_symbol(funcs) -> str:
    """The entry function: the only one, else the one marked ``tir.is_entry_func``, else the first packed one."""
    if len(funcs) == 1:
        return funcs[0][0]
    for symbol, func in funcs:
        if func.attrs.get("tir.is_entry_func"):
            return symbol
    for symbol, func in funcs:
        if is_packed(func):
            return symbol
    return funcs[0][0] if funcs else ""


def link_library(objects, metadata_text, blob=b"", output=None) -> pathlib.Path:
    """Link ``objects`` with the runtime helper and an object holding the metadata (and ``blob``) into a shared
    library: ``output`` when given, else a cache entry. Registered as ``"target.link_library"``."""
    blob_path = None
    try:
        if blob:
            fd, blob_path = tempfile.mkstemp(prefix="kiln-blob-", suffix=".bin", dir=compile_cache.cache_dir())
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
        meta = compiler.embed_object({"__kiln_metadata": metadata_text}, blob_path)
    finally:
        if blob_path is not None:
            os.unlink(blob_path)
    objs = [*objects, meta]
    if output is None:
        return compiler.link_shared_cached(objs)
    output = pathlib.Path(output)
    tmp = output.with_name(f".{output.name}.{os.getpid()}.tmp")
    try:
        compiler.link_shared(objs, tmp)
        os.replace(tmp, output)
    finally:
        tmp.unlink(missing_ok=True)
    return output


def make_library_module(objects, infos, entry, source, source_format, type_key, target) -> LibraryModule:
    """Link ``objects`` into a cached library carrying the metadata of ``infos`` and load it. The metadata records
    the target and the CPU features its code may use, which the runtime checks against the host before running it.
    """
    metadata = {"kiln_library": 1, "functions": infos, "entry": entry,
                "tree": [{"type_key": "library", "imports": []}],
                "target": str(target), "cpu_features": required_features(target.cpu_info)}
    path = link_library(objects, json.dumps(metadata))
    return LibraryModule(path, metadata, source=source, source_format=source_format, objects=objects,
                         type_key=type_key)


def build_c(mod, target) -> LibraryModule:
    """The C backend: print C, compile it with the system C compiler, link and load (``"target.build.c"``)."""
    target = target if isinstance(target, Target) else Target(target)
    funcs = prim_funcs(mod)
    gen = CSourceGenerator(target)
    infos = []
    for symbol, func in funcs:
        # C compilers keep _Float16 expressions in float or fuse them: float16 rounding is spelled out first
        gen.add_function(symbol, func)
        infos.append(function_info(symbol, func))
    source = gen.finish()
    flags = compiler.c_flags(target)
    obj = compiler.compile_object(source, flags, name=f"C source of {entry_symbol(funcs)}")
    module = make_library_module([str(obj)], infos, entry_symbol(funcs), source, "c", "c", target)
    module.extra_sources["asm"] = lambda: compiler.assembly(source, flags)
    return module


#: A part of a module compiled in its own process has at least this many functions (a module of fewer than twice as
#: many is compiled in one part): for fewer, forking costs more than it saves.
FUNCTIONS_PER_PART = 4


def build_llvm(mod, target) -> LibraryModule:
    """The LLVM backend: generate LLVM IR with llvmlite, optimize and emit an object, link and load
    (``"target.build.llvm"``)."""
    from . import llvm_compile
    from .codegen_llvm import LLVMGenerator

    target = target if isinstance(target, Target) else Target(target)
    funcs = prim_funcs(mod)
    entry = entry_symbol(funcs)

    def compile_part(part):
        gen = LLVMGenerator(target, name=entry or "kiln")
        for symbol, func in part:
            gen.add_function(symbol, func)
        obj, optimized = llvm_compile.compile_ir(str(gen.module), target, name=entry)
        return str(obj), optimized

    compiled = fork_map(compile_part, deal(funcs, FUNCTIONS_PER_PART), first_here=False)
    infos = [function_info(symbol, func) for symbol, func in funcs]
    optimized = [ir_text for _, ir_text in compiled]
    module = make_library_module([obj for obj, _ in compiled], infos, entry, "\n".join(optimized), "ll", "llvm",
                                 target)
    module.extra_sources["asm"] = lambda: "\n".join(llvm_compile.assembly(ir_text, target) for ir_text in optimized)
    return module



register_func("target.build.c", build_c)
register_func("target.build.llvm", build_llvm)
register_func("target.link_library", link_library)
register_func("driver.build", build)  # tvm.build, for the layers below the target (topi's self-checking kernels)
