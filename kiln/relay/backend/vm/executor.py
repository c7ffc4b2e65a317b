"""``relay.create_executor("vm", mod, device, target)``: compile with ``relay.vm.compile`` and run on the VM (TVM's
``relay.backend.vm.VMExecutor``)."""

from ....error import KilnError
from ....runtime.packed_func import register_func
from ....runtime.vm import VirtualMachine
from ...function import Function
from ...interpreter import Executor
from .compiler import compile as vm_compile

__all__ = ["VMExecutor"]


class VMExecutor(Executor):
    """Compiles ``mod`` for the VM on first use; ``evaluate()`` runs ``@main``, ``evaluate(func)`` a Relay function
    made the module's ``@main``.

    Parameters
    ----------
    mod : IRModule
        The program.
    device : Device
        The CPU.
    target : str or Target
        ``"llvm"`` or ``"c"``.
    params : dict, optional
        Values of parameters of ``@main`` by name, bound as constants.
    """

    def __init__(self, mod, device, target, params=None):
        self.mod = mod
        self.device = device
        self.target = target
        self.params = params

    def _make_executor(self, expr=None):
        mod = self.mod
        if isinstance(expr, Function):
            mod = mod.shallow_copy()
            mod["main"] = expr
        elif expr is not None and getattr(expr, "name_hint", expr) != "main":
            raise KilnError(f"the VM executor runs @main, not {expr}; compile the function as a module's @main")
        vm = VirtualMachine(vm_compile(mod, target=self.target, params=self.params), self.device)

        def _vm_wrapper(*args, **kwargs):
            return vm.run(*args, **kwargs)

        return _vm_wrapper


@register_func("relay.executor.vm")
def _vm_executor_factory(mod, device, target, params=None):
    return VMExecutor(mod, device, target, params)
