"""Gradients of the element-wise and broadcasting operators (TVM's ``relay/op/_tensor_grad.py``; the gradients of
shape, reduction and neural-network operators are in ``_tensor_grad_transform.py`` and ``_tensor_grad_nn.py``).

Each ``register_gradient(name)`` function takes ``orig`` (the forward call, with typed let-bound arguments) and
``grad`` (the adjoint of its result) and returns one adjoint per argument. A broadcasting operator's argument
received a stretched copy of itself, so its adjoint is summed back to its own shape (``collapse_sum_like``: the
adjoint of broadcasting). Piecewise-constant operators (``floor``, ``sign``...) have a zero gradient. Comparisons
need none: their results are boolean, and the AD sends no adjoint into values of non-float types.
"""

import math

from ..expr import const
from . import elemwise as _e
from . import tensor as _t
from .like import cast_like, collapse_sum_like, ones_like, zeros_like
from .op import register_gradient


def _scalar(value, like):
    """A scalar constant of ``like``'s dtype (``like`` is typed: an argument or the call)."""
    return const(value, dtype=like.checked_type.dtype)


def _arg(orig):
    return orig.args[0]


# -- unary math: d f(x) = f'(x) dx ---------------------------------------------------------------------------------
_UNARY = {
    "negative": lambda orig, g: -g,
    "exp": lambda orig, g: g * orig,
    "fast_exp": lambda orig, g: g * orig,
    "log": lambda orig, g: g / _arg(orig),
    "log2": lambda orig, g: g / (_arg(orig) * _scalar(math.log(2.0), orig)),
    "log10": lambda orig, g: g / (_arg(orig) * _scalar(math.log(10.0), orig)),
    "sqrt": lambda orig, g: g * _scalar(0.5, orig) / orig,
    "rsqrt": lambda orig, g: g * _scalar(-0.5, orig) * orig / _arg(orig),
    "tanh": lambda orig, g: g * (ones_like(orig) - orig * orig),
    "fast_tanh": lambda orig, g: g * (ones_like(orig) - orig * orig),
    "sigmoid": lambda orig, g: g * orig * (ones_like(orig) - orig),
    "erf": lambda orig, g: g * _scalar(2.0 / math.sqrt(math.pi), orig) * _t.exp(-(_arg(orig) * _arg(orig))),
    "fast_erf": lambda orig, g: g * _scalar(2.0 / math.sqrt(math.pi), orig) * _t.exp(-(_arg(orig) * _arg(orig))),
    "sin": lambda orig, g: g * _e.cos(_arg(orig)),
    "cos": lambda orig, g: -(g * _e.sin(_arg(orig))),
    "tan": lambda orig, g: g / (_e.cos(_arg(orig)) * _e.cos(_arg(orig))),
    "sinh": lambda orig, g: g * _e.cosh(_arg(orig)),
    "cosh": lambda orig, g: g * _e.sinh(_arg(orig)),
    "asin": lambda orig, g: g / _t.sqrt(ones_like(orig) - _arg(orig) * _arg(orig)),
    "acos": lambda orig, g: -(g / _t.sqrt(ones_like(orig) - _arg(orig) * _arg(orig))),
    "atan": lambda orig, g: g / (ones_like(orig) + _arg(orig) * _arg(orig)),
    "asinh": lambda orig, g: g / _t.sqrt(_arg(orig) * _arg(orig) + ones_like(orig)),
    "acosh": lambda orig, g: g / _t.sqrt(_arg(orig) * _arg(orig) - ones_like(orig)),
    "atanh": lambda orig, g: g / (ones_like(orig) - _arg(orig) * _arg(orig)),
    # |x|: the sign of x, taking +1 at 0 as TVM does
    "abs": lambda orig, g: _t.where(_e.less(_arg(orig), zeros_like(orig)), -g, g),
    "copy": lambda orig, g: g,
    "annotation.checkpoint": lambda orig, g: g,
}
_PIECEWISE_CONSTANT = ("floor", "ceil", "round", "trunc", "sign", "zeros_like", "ones_like")


def _unary_gradient(name, derivative):
    def gradient(orig, grad):
        return [derivative(orig, grad)]

    gradient.__name__ = f"{name}_grad"
    gradient.__doc__ = f"Gradient of ``{name}``."
    return gradient


for _name, _derivative in _UNARY.items():
    register_gradient(_name, _unary_gradient(_name, _derivative))


def _zero_gradient(orig, grad):
    """A piecewise-constant operator: zero almost everywhere."""
    return [zeros_like(a) for a in orig.args]


for _name in _PIECEWISE_CONSTANT:
    register_gradient(_name, _zero_gradient)


@register_gradient("clip")
def clip_grad(orig, grad):
    """``grad`` where ``a_min <= x <= a_max``, zero where the value was clamped."""
    x = orig.args[0]
    lo, hi = _scalar(orig.attrs.a_min, x), _scalar(orig.attrs.a_max, x)
    clamped = _e.logical_or(_e.less(x, lo), _e.greater(x, hi))
    return [_t.where(clamped, zeros_like(grad), grad)]


@register_gradient("cast")
def cast_grad(orig, grad):
    """The adjoint cast back to the argument's dtype."""
    return [cast_like(grad, orig.args[0])]


@register_gradient("cast_like")
def cast_like_grad(orig, grad):
    """The adjoint cast back to the argument's dtype; the dtype donor gets none."""
    x, like = orig.args
    return [cast_like(grad, x), zeros_like(like)]


# -- broadcasting binary operators ---------------------------------------------------------------------------------
@register_gradient("add")
def add_grad(orig, grad):
    """``[grad, grad]``, each summed back to its argument's shape."""
    x, y = orig.args
    return [collapse_sum_like(grad, x), collapse_sum_like(grad, y)]


@register_gradient("subtract")
def subtract_grad(orig, grad):
    """``[grad, -grad]``, each summed back to its argument's shape."""
    x, y = orig.args
    return [collapse_sum_like(grad, x), collapse_sum_like(-grad, y)]


@register_gradient("multiply")
def multiply_grad(orig, grad):
    """``[grad * y, grad * x]``."""
    x, y = orig.args
    return [collapse_sum_like(grad * y, x), collapse_sum_like(grad * x, y)]


@register_gradient("divide")
def divide_grad(orig, grad):
    """``[grad / y, -grad * (x / y) / y]`` (``x / y`` is the call's own result)."""
    x, y = orig.args
    return [collapse_sum_like(grad / y, x), collapse_sum_like(-(grad * orig / y), y)]


@register_gradient("power")
def power_grad(orig, grad):
    """``[grad * y * x ** (y - 1), grad * x ** y * log(x)]`` (the exponent's gradient is defined for x > 0)."""
    x, y = orig.args
    dx = grad * y * _t.power(x, y - ones_like(y))
    dy = grad * orig * _t.log(x)
    return [collapse_sum_like(dx, x), collapse_sum_like(dy, y)]


def _select_grad(pick_x):
    def gradient(orig, grad):
        x, y = orig.args
        to_x = pick_x(x, y)
        zeros = zeros_like(grad)
        return [collapse_sum_like(_t.where(to_x, grad, zeros), x),
                collapse_sum_like(_t.where(to_x, zeros, grad), y)]

    return gradient


# the adjoint goes to the argument that was selected (to x on ties)
register_gradient("maximum", _select_grad(_e.greater_equal))
register_gradient("minimum", _select_grad(_e.less_equal))


@register_gradient("where")
def where_grad(orig, grad):
    """``grad`` to ``x`` where the condition holds and to ``y`` elsewhere; none to the condition."""
    cond, x, y = orig.args
    zeros = zeros_like(grad)
    return [zeros_like(cond), collapse_sum_like(_t.where(cond, grad, zeros), x),
            collapse_sum_like(_t.where(cond, zeros, grad), y)]
