"""Compiling LLVM IR with llvmlite: optimization at -O3 for the target CPU and object emission, cached on disk.

The target machine is the target's triple (the host's by default), CPU (``-mcpu``, ``native`` = the host's) and
features (the host's plus ``-mattr``), position-independent so the object links into a shared library. The module
is optimized with LLVM's new pass manager (``PassBuilder`` at speed level 3 with loop and SLP vectorization) and
emitted as an object file. The cache key is the unoptimized IR text with the LLVM version, triple, CPU, features
and opt level; the optimized IR is cached beside the object so ``get_source()`` works on a cache hit.
"""

import functools

from ..error import CodegenError
from . import compile_cache


@functools.cache
def _llvm():
    try:
        import llvmlite.binding as llvm
    except ImportError as exc:
        raise CodegenError("the LLVM backend needs llvmlite (pip install llvmlite)") from exc
    try:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
    except RuntimeError as exc:
        raise CodegenError(f"llvmlite cannot initialize the native target ({exc})") from exc
    return llvm


def have_llvmlite() -> bool:
    """Whether llvmlite is importable."""
    try:
        _llvm()
    except CodegenError:
        return False
    return True


def target_machine(target):
    """The llvmlite TargetMachine for ``target``."""
    llvm = _llvm()
    triple = target.mtriple or llvm.get_process_triple()
    try:
        machine_target = llvm.Target.from_triple(triple)
    except RuntimeError as exc:
        raise CodegenError(f"LLVM does not support the target triple {triple!r} ({exc})") from exc
    opt = min(max(int(target.opt_level), 0), 3)
    return machine_target.create_target_machine(cpu=target.cpu_name, features=",".join(target.features), opt=opt,
                                                reloc="pic", codemodel="default")


def _optimize(module, machine, opt_level):
    llvm = _llvm()
    if hasattr(llvm, "create_pass_builder"):
        pto = llvm.create_pipeline_tuning_options(speed_level=opt_level)
        for flag in ("loop_vectorization", "slp_vectorization", "loop_unrolling", "loop_interleaving"):
            if hasattr(pto, flag):
                setattr(pto, flag, opt_level >= 2)
        builder = llvm.create_pass_builder(machine, pto)
        builder.getModulePassManager().run(module, builder)
        return
    pmb = llvm.create_pass_manager_builder()  # llvmlite before the new pass manager
    pmb.opt_level = opt_level
    pmb.loop_vectorize = pmb.slp_vectorize = opt_level >= 2
    pm = llvm.create_module_pass_manager()
    machine.add_analysis_passes(pm)
    pmb.populate(pm)
    pm.run(module)


def compile_ir(ir_text, target, name="kernel"):
    """Optimize and compile LLVM IR text for ``target``.

    Returns
    -------
    object_path, optimized_ir : pathlib.Path, str
    """
    llvm = _llvm()
    machine = target_machine(target)
    key = compile_cache.content_hash(
        "llvm-object", ".".join(map(str, llvm.llvm_version_info)), machine.triple, target.cpu_name,
        ",".join(target.features), str(target.opt_level), ir_text,
    )
    obj_path, ll_path = compile_cache.lookup(key, ".o"), compile_cache.lookup(key, ".ll")
    if obj_path is not None and ll_path is not None:
        return obj_path, ll_path.read_text()
    try:
        module = llvm.parse_assembly(ir_text)
        module.triple = machine.triple
        module.data_layout = str(machine.target_data)
        module.verify()
    except RuntimeError as exc:
        raise CodegenError(f"LLVM codegen produced invalid IR for {name}: {exc}") from exc
    _optimize(module, machine, int(target.opt_level))
    optimized = str(module)
    obj = machine.emit_object(module)
    compile_cache.write_bytes_cached(key, ".ll", optimized.encode())
    return compile_cache.write_bytes_cached(key, ".o", obj), optimized


def assembly(optimized_ir, target) -> str:
    """The target assembly of (optimized) LLVM IR text."""
    llvm = _llvm()
    machine = target_machine(target)
    module = llvm.parse_assembly(optimized_ir)
    return machine.emit_assembly(module)
