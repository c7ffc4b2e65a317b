"""``relay.transform.FunctionPass`` and ``function_pass``: a pass applied to each Relay function of a module.

As in TVM (``src/relay/ir/transform.cc``), the pass function receives each ``relay.Function`` with a shallow copy of
the module, and the new functions replace the old ones once every function was visited. Functions marked
``SkipOptimization``, ``Primitive`` (fused operators) or ``Compiler`` (external codegen) are left alone. When
``transform.max_passes`` is set, bisection counts one step per function (``BISECT: running pass (N) <name> on
function (@f)``), so a bad rewrite can be narrowed down to one function. As in TVM, a module a function pass
changed is typed by ``InferType``.
"""

from ...ir.function_pass import FunctionLevelPass
from ...ir.transform import make_pass_decorator, pass_decorator_doc
from ..function import Function

_SKIP_ATTRS = ("SkipOptimization", "Primitive", "Compiler")


def skip_function(func) -> bool:
    """Whether a function pass leaves ``func`` alone (attrs ``SkipOptimization``, ``Primitive`` or ``Compiler``)."""
    attrs = func.attrs
    return any(attrs.get(key, 0) not in (0, None, "") for key in _SKIP_ATTRS)


class FunctionPass(FunctionLevelPass):
    """A pass over each Relay function of a module (it cannot add or remove functions).

    Built from a function ``(func, mod, ctx) -> func`` by :func:`function_pass`, or subclassed with
    ``transform_function``.
    """

    function_kind = "relay.Function"

    def applies_to(self, func) -> bool:
        return isinstance(func, Function) and not skip_function(func)

    def applies_to_kind(self, func) -> bool:
        return isinstance(func, Function)

    def _run(self, mod, ctx):
        # as TVM's FunctionPass, type what the pass changed: a pass over an untyped module gives typed functions, and
        # the next pass sees checked types on the nodes this one created; a module the pass left alone stays itself
        from .infer_type import infer_type

        result = super()._run(mod, ctx)
        return result if result is mod else infer_type(result)


function_pass = make_pass_decorator(FunctionPass, "transform_function", "function_pass")
function_pass.__name__ = "function_pass"
function_pass.__doc__ = pass_decorator_doc("function pass", "(func, mod, ctx) -> func", """\
>>> @relay.transform.function_pass(opt_level=1)   # doctest: +SKIP
... class TestReplaceFunc:
...     def __init__(self, new_func):
...         self.new_func = new_func
...
...     def transform_function(self, func, mod, ctx):
...         return self.new_func""")
