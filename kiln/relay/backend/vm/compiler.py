"""``relay.vm.compile``: from a Relay module to a VM executable (TVM's ``relay.backend.vm``).

The steps, all under the current PassContext with the target current:

1. :func:`kiln.relay.optimize` binds ``params`` and runs the standard pipeline ending with FuseOps, on every function
   of the module (the same passes ``relay.build`` runs);
2. the VM pipeline (:data:`VM_PIPELINE`), each a registered pass, so instruments see every step: ToANormalForm (an
   evaluation order, and values shared by two branches computed once before them), InferType (the new variables'
   types, which closures that capture them need), LambdaLift (closures become global functions),
   DeadCodeElimination (what lifting left unused), InferType, LowerTE (every fused function a ``tir.PrimFunc``
   called with ``call_lowered``), ManifestAlloc (explicit allocation of every kernel output) and MemoryPlan (storage
   shared between tensors that are not alive together);
3. the PrimFuncs are compiled into one library, as ``relay.build`` does;
4. each Relay function becomes a VM function (:mod:`.function_compiler`), with the constants, kernel names and
   function table shared module-wide (:class:`ModuleContext`).

The result is a :class:`~kiln.runtime.vm.Executable`.
"""

from ....error import CodegenError, KilnError
from ....ir.module import IRModule
from ....ir.transform import get_pass
from ....runtime.vm import Executable
from ....tir.function import PrimFunc
from ...build import compile_kernels, gc_paused, normalize_params, resolve_build_target
from ...function import Function
from ...optimize import optimize
from ..lower_te import LowerTE
from .function_compiler import FunctionCompiler, closure_body

__all__ = ["compile", "VMCompiler", "ModuleContext", "VM_PIPELINE"]

VM_PIPELINE = ("ToANormalForm", "InferType", "LambdaLift", "DeadCodeElimination", "InferType", "LowerTE",
               "ManifestAlloc", "MemoryPlan")
"""The passes run after the standard optimizations, in order (each is called directly, so each always runs)."""


class ModuleContext:
    """What the functions of one executable share: the function table, the constants and the kernels."""

    def __init__(self, mod):
        self.mod = mod
        self.functions = [gv for gv, f in mod.functions.items() if isinstance(f, Function) and not f.is_primitive()]
        self.function_indices = {gv.name_hint: i for i, gv in enumerate(self.functions)}
        self.constants: list = []
        self.constant_indices: dict = {}  # id(Constant) -> index
        self.kernels: list = []
        self.kernel_indices: dict = {}

    def function_index(self, gv, caller) -> int:
        index = self.function_indices.get(gv.name_hint)
        if index is None:
            raise CodegenError(f"VM compiler: {caller} refers to {gv}, which is not a Relay function of the module")
        return index

    def is_closure(self, gv) -> bool:
        """Whether ``gv`` is a lifted closure: calling it builds the closure (``AllocClosure``)."""
        return closure_body(self.mod[gv]) is not None

    def constant_index(self, const) -> int:
        index = self.constant_indices.get(id(const))
        if index is None:
            index = self.constant_indices[id(const)] = len(self.constants)
            self.constants.append(const)  # kept alive, so ids stay unique
        return index

    def kernel_index(self, gv) -> int:
        index = self.kernel_indices.get(gv.name_hint)
        if index is None:
            index = self.kernel_indices[gv.name_hint] = len(self.kernels)
            self.kernels.append(gv.name_hint)
        return index


def lower_for_vm(mod, target, params=None, module_name="vm_mod") -> IRModule:
    """Steps 1 and 2 of the module docstring: the module the bytecode is emitted from."""
    mod, _ = optimize(mod, target, params)
    for name in VM_PIPELINE:
        mod = (LowerTE(module_name=module_name) if name == "LowerTE" else get_pass(name))(mod)
    return mod


def codegen(mod, lib) -> Executable:
    """Step 4: the executable of the lowered ``mod`` (from :func:`lower_for_vm`) with the kernel library ``lib``."""
    context = ModuleContext(mod)
    functions = [FunctionCompiler(context, gv.name_hint).compile(mod[gv]) for gv in context.functions]
    constants = [c.data for c in context.constants]
    return Executable(functions, constants, context.kernels, lib)


def compile(mod, target=None, target_host=None, params=None, mod_name="vm_mod"):  # noqa: A001  (TVM's name)
    """Compile ``mod`` for the VM (TVM's ``relay.vm.compile``).

    Parameters
    ----------
    mod : IRModule or relay.Function
        The program; ``@main`` is its entry, other global functions may call each other (recursion), and functions
        may hold control flow, closures and tuples.
    target : str or Target, optional
        ``"llvm"`` (default, or the current target) or ``"c"``.
    target_host : str or Target, optional
        Accepted for TVM compatibility (CPU targets are their own host).
    params : dict of str to NDArray or numpy array, optional
        Values of parameters of ``@main`` by name, bound as constants.
    mod_name : str
        The kernel name prefix (``tvmgen_<mod_name>_fused_...``).

    Returns
    -------
    exe : kiln.runtime.vm.Executable

    Examples
    --------
    >>> exe = relay.vm.compile(mod, target="llvm", params=params)            # doctest: +SKIP
    >>> vm = kiln.runtime.vm.VirtualMachine(exe, kiln.cpu(0))               # doctest: +SKIP
    >>> out = vm.run(x)                                                      # doctest: +SKIP
    """
    if isinstance(mod, Function):
        mod = IRModule.from_expr(mod)
    if not isinstance(mod, IRModule):
        raise KilnError(f"relay.vm.compile takes an IRModule or a relay.Function, not {type(mod).__name__}")
    if "main" not in {gv.name_hint for gv in mod.functions}:
        raise KilnError("relay.vm.compile: the module has no @main")
    target = resolve_build_target(target, target_host, "relay.vm.compile")
    params = normalize_params(params, "relay.vm.compile")
    with target, gc_paused():
        lowered = lower_for_vm(mod, target, params, mod_name)
        kernels = IRModule({gv: f for gv, f in lowered.functions.items() if isinstance(f, PrimFunc)})
        lib = compile_kernels(kernels, target) if len(kernels) else None
        return codegen(lowered, lib)


class VMCompiler:
    """TVM's ``relay.vm.VMCompiler``: ``lower(mod, target, params)``, then ``codegen()``, then ``get_exec()``."""

    def __init__(self):
        self._params: dict = {}
        self._exec = None

    def set_params(self, params):
        """Parameters of ``@main`` bound by name at the next :meth:`lower`."""
        self._params = dict(params or {})

    def lower(self, mod, target=None, target_host=None):
        """Compile ``mod`` (see :func:`compile`)."""
        self._exec = compile(mod, target, target_host, self._params)

    def codegen(self):
        """Nothing left to do: :meth:`lower` emitted the bytecode (kept for TVM's call sequence)."""
        if self._exec is None:
            raise KilnError("VMCompiler.codegen: call lower(mod, target) first")

    def get_exec(self) -> Executable:
        """The executable :meth:`lower` produced."""
        if self._exec is None:
            raise KilnError("VMCompiler.get_exec: call lower(mod, target) first")
        return self._exec

    def optimize(self, mod, target=None, params=None):
        """``(mod, params)`` after the VM's optimizations (steps 1 and 2), for inspection."""
        if isinstance(mod, Function):
            mod = IRModule.from_expr(mod)
        target = resolve_build_target(target, None, "VMCompiler.optimize")
        with target:
            return lower_for_vm(mod, target, normalize_params(params, "VMCompiler.optimize")), {}
