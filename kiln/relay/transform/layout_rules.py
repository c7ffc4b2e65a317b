"""Per-operator layout knowledge for the layout rewriter (TVM's ``FInferCorrectLayout``).

:data:`LAYOUT_OPS` names the operators whose attributes *declare* layouts (conv2d and the poolings): which layout
each input is read in and which layout the output is in. A conversion hook changes those attributes; the rewriter
then moves the inputs.

:func:`rule_for` gives, per operator, how it carries a new layout of its inputs to its output: a rule registered in
:data:`RULES` (bias_add, concatenate, poolings, normalizations, reductions, pad), else the broadcast rule for the
numpy-broadcasting operators and the element-wise rule for one-input ``ELEMWISE`` operators. A rule gets the
rewriter, the original (typed) call and its rewritten arguments (:class:`LayoutValue`) and returns the rewritten
call's LayoutValue, or None to let the rewriter bring every input back to its original layout. Rules only act when
an input arrives in a new layout; they never change a layout on their own.
"""

import dataclasses
import inspect
from collections.abc import Callable

from ...ir.registry import op_table
from ...tir.layout import layout as parse_layout
from .. import op as _op
from ..expr import Call
from ..op.op import OpPattern
from ..op.type_relations import broadcast_bool_rel, broadcast_rel


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class LayoutValue:
    """A rewritten expression ``expr`` holding the original tensor moved from layout ``old`` to layout ``new``
    (both None: unknown and unchanged; tuples of layouts for tuple values)."""

    expr: object
    old: object = None
    new: object = None

    @property
    def changed(self) -> bool:
        """Whether ``expr`` is in another layout than the original expression."""
        return self.old != self.new


@dataclasses.dataclass(frozen=True)
class LayoutSpec:
    """The layouts an operator call declares: ``inputs(call)`` (one per argument, None: no layout) and
    ``output(call)``."""

    inputs: Callable[[Call], list[str | None]]
    output: Callable[[Call], str]


def _conv_inputs(call):
    return [call.attrs.data_layout, call.attrs.kernel_layout]


def _conv_output(call):
    return call.attrs.out_layout or call.attrs.data_layout


def _pool_inputs(call):
    return [call.attrs.layout]


def _pool_output(call):
    return call.attrs.out_layout or call.attrs.layout


POOLS = ("nn.max_pool2d", "nn.avg_pool2d", "nn.global_avg_pool2d", "nn.global_max_pool2d")
LAYOUT_OPS = {"nn.conv2d": LayoutSpec(_conv_inputs, _conv_output)}
LAYOUT_OPS.update({name: LayoutSpec(_pool_inputs, _pool_output) for name in POOLS})
RULES = op_table("layout rule")
register_rule = RULES.register
"""Register the decorated layout rule for the operators ``names`` (``@register_rule("nn.bias_add")``)."""


# ---- layout helpers ---------------------------------------------------------------------------------------------
def _name(axes) -> str:
    return "".join(f"{f}{a}" if f is not None else a for a, f in axes)


def _plain(value) -> bool:
    """Whether ``value`` holds one tensor moved between two known layouts."""
    return value.changed and isinstance(value.old, str) and isinstance(value.new, str)


def _compatible(old, new) -> bool:
    """Whether ``old`` is a layout without sub-axes and ``new`` has the same primal axes."""
    lo, ln = parse_layout(old), parse_layout(new)
    return lo.primal == old and set(ln.primal) == set(lo.primal)


def _split(layout, letter) -> bool:
    return layout.index_of(letter.lower()) >= 0


def _new_axis(old, new, axis, allow_split=False):
    """Where axis ``axis`` of layout ``old`` is in layout ``new`` (None when ``new`` splits it, unless allowed)."""
    lo, ln = parse_layout(old), parse_layout(new)
    letter = lo.axes[axis][0]
    if _split(ln, letter) and not allow_split:
        return None
    return ln.index_of(letter)


def _with_attrs(call, args, **changes):
    attrs = dataclasses.replace(call.attrs, **changes) if changes else call.attrs
    return call.with_fields(args=tuple(args), attrs=attrs)


def _fits(layout_name, shape) -> bool:
    """Whether a tensor of ``shape`` in the primal layout of ``layout_name`` can be split as it says."""
    lay = parse_layout(layout_name)
    return all(shape[lay.primal.index(a.upper())] % f == 0 for a, f in lay.axes if f is not None)


# ---- element-wise and broadcast ----------------------------------------------------------------------------------
def elementwise_rule(rw, call, args):
    """An element-wise operator computes in whatever layout its input is in."""
    (value,) = args
    if not value.changed:
        return None
    return _result(call.with_fields(args=(value.expr,)), value.old, value.new)


def _result(expr, old, new):
    return LayoutValue(expr, old, new)


def broadcast_rule(rw, call, args):
    """Broadcasting operators follow the first full-rank input in a new layout; other full-rank inputs are
    transformed to it, lower-rank ones (per-channel constants) get leading axes then the same transform, scalars
    stay (TVM's ``BinaryBroadcastLayout`` with its sub-layout handling)."""
    ndim = call.checked_type.ndim
    lead = next((v for v, a in zip(args, call.args, strict=True) if _plain(v) and a.checked_type.ndim == ndim), None)
    if lead is None or not _compatible(lead.old, lead.new):
        return None
    old, new = lead.old, lead.new
    out_shape = call.checked_type.shape
    new_args = []
    for value, arg in zip(args, call.args, strict=True):
        ttype = arg.checked_type
        rank = ttype.ndim
        if rank == 0:
            new_args.append(rw.original(value))
            continue
        if rank > ndim or (value.old not in (None, old) and rank == ndim):
            return None
        # a broadcast (size-1) axis cannot be split into blocks
        full = (1,) * (ndim - rank) + tuple(ttype.shape)
        if any(f is not None and full[old.index(a.upper())] != out_shape[old.index(a.upper())]
               for a, f in parse_layout(new).axes):
            return None
        if rank == ndim:
            new_args.append(rw.as_layout(value, old, new))
        else:
            new_args.append(rw.transform(rw.expand_dims(rw.original(value), ndim - rank), old, new))
    return _result(call.with_fields(args=tuple(new_args)), old, new)


@register_rule("nn.bias_add")
def bias_add_rule(rw, call, args):
    """``bias_add`` moves its axis; when the new layout splits that axis it becomes a broadcast ``add``."""
    data, bias = args
    if not _plain(data) or not _compatible(data.old, data.new):
        return None
    ndim = call.checked_type.ndim
    axis = call.attrs.axis % ndim
    new_axis = _new_axis(data.old, data.new, axis)
    if new_axis is not None:
        return _result(_with_attrs(call, [data.expr, rw.original(bias)], axis=new_axis), data.old, data.new)
    vec = rw.original(bias)
    if ndim - axis - 1 > 0:
        vec = _op.expand_dims(vec, axis=1, num_newaxis=ndim - axis - 1)
    vec = rw.transform(rw.expand_dims(vec, axis), data.old, data.new)
    return _result(_op.add(data.expr, vec), data.old, data.new)


@register_rule("concatenate")
def concatenate_rule(rw, call, args):
    """Concatenation follows the first input in a new layout, along the same (moved) axis."""
    (tup,) = args
    if not isinstance(tup.old, tuple):
        return None
    fields = [rw.field(tup, i) for i in range(len(tup.old))]
    lead = next((f for f in fields if _plain(f)), None)
    if lead is None or not _compatible(lead.old, lead.new):
        return None
    old, new = lead.old, lead.new
    shapes = [t.shape for t in call.args[0].checked_type.fields]
    ndim = len(shapes[0])
    axis = call.attrs.axis % ndim
    new_axis = _new_axis(old, new, axis, allow_split=True)
    if any(f.old not in (None, old) for f in fields) or not all(_fits(new, s) for s in shapes):
        return None
    exprs = [rw.as_layout(f, old, new) for f in fields]
    return _result(_op.concatenate(exprs, new_axis), old, new)


# ---- layout-declaring operators that follow their input ----------------------------------------------------------
@register_rule(*POOLS)
def pool_rule(rw, call, args):
    """Pooling computes in its input's new layout when that layout keeps H and W whole."""
    (data,) = args
    attrs = call.attrs
    if not _plain(data) or data.old != attrs.layout or attrs.out_layout not in ("", attrs.layout):
        return None
    lay = parse_layout(data.new)
    if not _compatible(data.old, data.new) or _split(lay, "H") or _split(lay, "W"):
        return None
    out_layout = data.new if attrs.out_layout else ""
    return _result(_with_attrs(call, [data.expr], layout=data.new, out_layout=out_layout), data.old, data.new)


@register_rule("nn.batch_norm", "nn.layer_norm")
def norm_rule(rw, call, args):
    """Normalizations over one (unsplit) channel axis move that axis; batch_norm's other outputs are vectors."""
    data, *params = args
    if not _plain(data) or not _compatible(data.old, data.new):
        return None
    new_axis = _new_axis(data.old, data.new, call.attrs.axis % call.args[0].checked_type.ndim)
    if new_axis is None:
        return None
    new = _with_attrs(call, [data.expr, *(rw.original(p) for p in params)], axis=new_axis)
    if call.op.name == "nn.batch_norm":
        return _result(new, (data.old, None, None), (data.new, None, None))
    return _result(new, data.old, data.new)


@register_rule("sum", "mean", "max", "min", "prod")
def reduce_rule(rw, call, args):
    """Reductions reduce the same (moved) axes; without keepdims the result's layout drops them."""
    (data,) = args
    attrs = call.attrs
    if not _plain(data) or attrs.exclude or not _compatible(data.old, data.new):
        return None
    lo, ln = parse_layout(data.old), parse_layout(data.new)
    ndim = lo.ndim
    axes = range(ndim) if attrs.axis is None else [a % ndim for a in attrs.axis]
    letters = {lo.axes[a][0] for a in axes}
    if attrs.keepdims and any(_split(ln, a) for a in letters):
        return None
    new_axes = sorted(i for i, (a, _) in enumerate(ln.axes) if a.upper() in letters)
    new = _with_attrs(call, [data.expr], axis=tuple(new_axes))
    if attrs.keepdims:
        return _result(new, data.old, data.new)
    old_out = _name([ax for ax in lo.axes if ax[0] not in letters])
    new_out = _name([ax for ax in ln.axes if ax[0].upper() not in letters])
    if not old_out:
        return _result(new, None, None)
    return _result(new, old_out, new_out)


@register_rule("nn.pad")
def pad_rule(rw, call, args):
    """Padding pads the same (moved) axes; split axes must not be padded."""
    data, pad_value = args
    if not _plain(data) or not _compatible(data.old, data.new):
        return None
    lo, ln = parse_layout(data.old), parse_layout(data.new)
    by_letter = dict(zip(lo.primal, call.attrs.pad_width, strict=True))
    width = []
    for letter, factor in ln.axes:
        if factor is not None:
            width.append((0, 0))
        elif _split(ln, letter) and by_letter[letter] != (0, 0):
            return None
        else:
            width.append(by_letter[letter])
    new = _with_attrs(call, [data.expr, rw.original(pad_value)], pad_width=tuple(width))
    return _result(new, data.old, data.new)


def rule_for(op):
    """The layout rule of operator ``op``: registered, or derived from its fusion pattern and type relation."""
    rule = RULES.get(op.name)
    if rule is not None:
        return rule
    op_name = op.name
    relation = inspect.unwrap(op.get_attr("FTypeRelation"))  # without the dtype check register_relay_op adds
    if relation in (broadcast_rel, broadcast_bool_rel) or op_name == "where":
        return broadcast_rule
    if op.get_attr("TOpPattern") == OpPattern.ELEMWISE and op.get_attr("num_inputs") == 1:
        return _checked_elementwise
    return None


def _checked_elementwise(rw, call, args):
    if len(args) != 1 or call.checked_type.shape != call.args[0].checked_type.shape:
        return None
    return elementwise_rule(rw, call, args)
