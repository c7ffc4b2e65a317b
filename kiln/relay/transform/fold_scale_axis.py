"""The FoldScaleAxis passes: ``BackwardFoldScaleAxis``, ``ForwardFoldScaleAxis`` and ``FoldScaleAxis``.

``FoldScaleAxis()`` is TVM's: a ``Sequential`` named ``FoldScaleAxis`` running BackwardFoldScaleAxis,
ForwardFoldScaleAxis and FoldConstant (which folds the ``weight * scale`` products the first two leave behind).
The two halves are function passes at opt_level 3 requiring InferType, so inside an opt_level 2 pipeline the
Sequential runs but skips them, as in TVM. The algorithms are in :mod:`.fold_scale_forward` and
:mod:`.fold_scale_backward`.
"""

from dataclasses import dataclass

from ...ir.transform import PassInfo, Sequential, get_pass, register_pass
from .fold_scale_backward import backward_fold_scale_axis
from .fold_scale_forward import forward_fold_scale_axis
from .fold_scale_util import retype_function, typed_function
from .function_pass import FunctionPass

__all__ = ["BackwardFoldScaleAxis", "FoldScaleAxis", "ForwardFoldScaleAxis"]


def _apply(fold, func, mod):
    typed = typed_function(func, mod)
    out = fold(typed)
    return func if out is typed else retype_function(out, mod)


@register_pass("ForwardFoldScaleAxis")
@dataclass(frozen=True)
class ForwardFoldScaleAxis(FunctionPass):
    """Fold per-channel scales of conv2d/dense inputs into their weights (TVM's ``ForwardFoldScaleAxis``).

    Examples
    --------
    >>> x = relay.var("x", shape=(1, 4, 8, 8)); w = relay.var("w", shape=(8, 4, 3, 3))   # doctest: +SKIP
    >>> s = relay.const(np.full((4, 1, 1), 2.0, "float32"))
    >>> mod = IRModule.from_expr(relay.nn.conv2d(relay.multiply(x, s), w))
    >>> ForwardFoldScaleAxis()(mod)   # conv2d(%x, multiply(%w, expand_dims(squeeze(s))))
    """

    info = PassInfo(3, "ForwardFoldScaleAxis", required=("InferType",))

    def transform_function(self, func, mod, ctx):
        return _apply(forward_fold_scale_axis, func, mod)


@register_pass("BackwardFoldScaleAxis")
@dataclass(frozen=True)
class BackwardFoldScaleAxis(FunctionPass):
    """Fold per-channel scales of conv2d/dense outputs into their weights (TVM's ``BackwardFoldScaleAxis``).

    Examples
    --------
    >>> y = relay.multiply(relay.nn.conv2d(x, w), s)   # doctest: +SKIP
    >>> BackwardFoldScaleAxis()(IRModule.from_expr(y))   # conv2d(%x, multiply(%w, expand_dims(squeeze(s))))
    """

    info = PassInfo(3, "BackwardFoldScaleAxis", required=("InferType",))

    def transform_function(self, func, mod, ctx):
        return _apply(backward_fold_scale_axis, func, mod)


@register_pass("FoldScaleAxis")
def FoldScaleAxis():
    """Backward then forward scale folding, then FoldConstant: TVM's ``FoldScaleAxis`` Sequential.

    Examples
    --------
    >>> with tvm.transform.PassContext(opt_level=3):   # doctest: +SKIP
    ...     mod = relay.transform.FoldScaleAxis()(mod)
    """
    # mypy gives a dataclass without fields its base's __init__ (python/mypy#16613), not the generated one
    passes = [BackwardFoldScaleAxis(), ForwardFoldScaleAxis()]  # type: ignore[call-arg]
    return Sequential([*passes, get_pass("FoldConstant")], name="FoldScaleAxis")
