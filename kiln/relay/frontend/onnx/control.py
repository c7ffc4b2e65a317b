"""Converters of ONNX control flow: ``If``, ``Loop`` and ``Scan``.

``If``: a condition known while converting (exporters emit ``Shape -> Equal -> If``, which folds with static shapes)
makes the node the nodes of the branch it takes, converted in place (branch nodes may read any value of the
enclosing graph). A condition known only at run time becomes a Relay ``If`` of both branches, which the VM runs.

``Loop`` becomes a recursive global function, as in TVM's frontend: ``@<node>_loop(i, max_count, cond, carried...,
scans..., outer...)`` runs the body and calls itself while ``cond and i < max_count``, else returns
``(carried..., scans...)``. The values a body reads from enclosing scopes are passed as the trailing parameters
``outer...`` (a global function has no free variables); each scan output is concatenated along a new first axis onto
a tensor that starts empty, so its first dimension is ``relay.Any`` (when a scan output's own dimensions are known
only at run time, the first iteration starts the tensor instead: the empty start cannot have them). Such a module
runs on the VM.

``Scan`` iterates over a sequence length that is static in kiln's types, so it is unrolled: the body is converted
once over fresh variables and instantiated for each step with that step's slices, which keeps it runnable on the
graph executor (opset 8's batch axis: each row scanned so, the rows stacked).
"""

import numpy as np

from ....error import OpNotImplemented
from ....ir.expr import GlobalVar
from ....ir.type import Any, TensorType, TupleType
from ... import op as _op
from ...analysis import free_vars
from ...expr import Call, Tuple, TupleGetItem, Var, bind
from ...expr import If as RelayIf
from ...function import Function
from .common import OnnxOpConverter, const, register


def _scalar(ctx, expr, what):
    """``expr`` (a tensor of one element) as a scalar."""
    shape = ctx.shape(expr)
    if any(not isinstance(d, int) for d in shape) or int(np.prod(shape, dtype=np.int64)) != 1:
        raise ctx.error(f"{what} must hold one value, got a tensor of shape {shape}")
    return expr if shape == () else _op.reshape(expr, ())


def _subgraph_inputs(graph, types, ctx, what):
    """Fresh variables for the inputs of the subgraph ``graph``, of ``types``."""
    if len(graph.input) != len(types):
        raise ctx.error(f"{what} takes {len(graph.input)} inputs; the node gives it {len(types)}")
    return [Var(info.name, ttype, checked_type_=ttype) for info, ttype in zip(graph.input, types, strict=True)]


@register("If")
class If(OnnxOpConverter):
    """The taken branch of an If with a compile-time condition, else a Relay ``If`` of both branches."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        cond = inputs[0]
        value = ctx.value_or_none(cond, "the condition of If")
        if value is not None:
            if value.size != 1:
                raise ctx.error(f"the condition must hold one value, got shape {value.shape}")
            taken = "then_branch" if bool(value.reshape(-1)[0]) else "else_branch"
            return ctx.graph.convert_subgraph(attr[taken], f"{ctx.name}/{taken}", ctx)
        cond = _scalar(ctx, cond, "the condition of If")
        name, node = ctx.name, ctx.node
        then = ctx.graph.convert_subgraph(attr["then_branch"], f"{name}/then_branch", ctx)
        other = ctx.graph.convert_subgraph(attr["else_branch"], f"{name}/else_branch", ctx)
        ctx.name, ctx.node = name, node
        if len(then) != len(other):
            raise ctx.error(f"then_branch has {len(then)} outputs, else_branch {len(other)}")
        then, other = list(then), list(other)
        for k, (a, b) in enumerate(zip(then, other, strict=True)):
            ta, tb = ctx.typed(a).checked_type, ctx.typed(b).checked_type
            if ta != tb and isinstance(ta, TensorType) and isinstance(tb, TensorType) and ta.dtype == tb.dtype \
                    and len(ta.shape) == len(tb.shape):
                # shapes that differ: each branch's value reshaped to its own shape read at run time (times the
                # condition that selects it, 1 there), so both have the dynamic type and DynamicToStatic keeps it
                reshape = ctx.dynamic_op("dyn.reshape", f"output {k}'s shape (it differs between the branches)")
                taken = [_op.cast(cond, "int64"), _op.cast(_op.logical_not(cond), "int64")]
                then[k] = reshape(a, _op.multiply(_op.shape_of(a, "int64"), taken[0]))
                other[k] = reshape(b, _op.multiply(_op.shape_of(b, "int64"), taken[1]))
        if len(then) == 1:
            return RelayIf(cond, then[0], other[0])
        result = ctx.typed(RelayIf(cond, Tuple(tuple(then)), Tuple(tuple(other))))
        return [TupleGetItem(result, k) for k in range(len(then))]


def _outer_params(exprs, own, ctx):
    """The variables ``exprs`` read that are not ``own`` (values of enclosing scopes), with fresh parameters
    standing for them inside a global function: ``(outer vars, fresh vars)``."""
    seen: dict = {}
    for expr in exprs:
        for v in free_vars(expr):
            if v not in own and v not in seen:
                ttype = ctx.typed(v).checked_type
                seen[v] = Var(v.name_hint, ttype, checked_type_=ttype)
    return list(seen), list(seen.values())


@register("Loop")
class Loop(OnnxOpConverter):
    """A loop as a recursive global function (see the module docstring)."""

    @classmethod
    def _impl_v1(cls, inputs, attr, ctx):
        body, name, node = attr["body"], ctx.name, ctx.node
        max_count, cond, inits = inputs[0], inputs[1], inputs[2:]
        if any(v is None for v in inits):
            raise ctx.error("a loop-carried value is omitted")
        n_carried = len(inits)
        n_scan = len(body.output) - 1 - n_carried
        if n_scan < 0:
            raise ctx.error(f"the body has {len(body.output)} outputs for {n_carried} loop-carried values (it needs "
                            f"the condition, then one per loop-carried value, then the scan outputs)")
        carried_types = [ctx.typed(v).checked_type for v in inits]
        for _ in range(2):  # once more when the body changes a carried value's shape: those dimensions become Any
            loop_vars = _subgraph_inputs(body, [TensorType((), "int64"), TensorType((), "bool"), *carried_types],
                                         ctx, "the body")
            outs = ctx.graph.convert_subgraph(body, f"{name}/body", ctx, {v.name_hint: v for v in loop_vars})
            ctx.name, ctx.node = name, node
            outs = [ctx.typed(o) for o in outs]
            new_types = [_generalize(t, o.checked_type) for t, o in zip(carried_types, outs[1:1 + n_carried],
                                                                        strict=True)]
            if new_types == carried_types:
                break
            carried_types = new_types
        else:
            raise ctx.error("the loop-carried values change type from one iteration to the next")
        i_var, cond_var, carried_vars = loop_vars[0], loop_vars[1], loop_vars[2:]
        # the condition the body computes stops the loop even when the node omits cond (as onnxruntime does)
        cond_out = _scalar(ctx, outs[0], "the condition the body computes")
        carried_out, scan_out = outs[1:1 + n_carried], outs[1 + n_carried:]
        scan_types = []
        for k, s in enumerate(scan_out):
            ttype = s.checked_type
            if not isinstance(ttype, TensorType):
                raise ctx.error(f"scan output {k} of the body is not a tensor", OpNotImplemented)
            scan_types.append(TensorType((Any(), *ttype.shape), ttype.dtype))
        scan_vars = [Var(f"scan{k}", t, checked_type_=t) for k, t in enumerate(scan_types)]
        count_var = Var("max_count", TensorType((), "int64"), checked_type_=TensorType((), "int64"))
        own = {*loop_vars, count_var, *scan_vars}
        outer, fresh = _outer_params([cond_out, *carried_out, *scan_out], own, ctx)

        gv = GlobalVar(_global_name(ctx, name))
        ret_type = TupleType((*carried_types, *scan_types))
        stacked = []
        for v, s, t in zip(scan_vars, scan_out, scan_types, strict=True):
            row = _op.expand_dims(s, 0)
            grown = _op.concatenate([v, row], 0)
            if not all(isinstance(d, int) for d in t.shape[1:]):
                # the accumulator starts empty without the per-iteration shape (known after the first step), so
                # the first step starts it anew rather than concatenating onto it
                grown = RelayIf(_op.equal(i_var, const(0, "int64")), row, grown)
            stacked.append(grown)
        step = Call(gv, (_op.add(i_var, const(1, "int64")), count_var, cond_out, *carried_out, *stacked, *outer))
        done = Tuple((*carried_vars, *scan_vars))
        keep_going = _op.logical_and(cond_var, _op.less(i_var, count_var))
        params = [i_var, count_var, cond_var, *carried_vars, *scan_vars]
        fn_body = bind(RelayIf(keep_going, step, done), dict(zip(outer, fresh, strict=True)))
        ctx.graph.mod[gv] = Function(params + fresh, fn_body, ret_type=ret_type)

        count = const(np.iinfo(np.int64).max, "int64") if max_count is None else \
            _op.cast(_scalar(ctx, max_count, "the trip count M"), "int64")
        start = const(True, "bool") if cond is None else _scalar(ctx, cond, "the condition cond")
        # a dimension known only at run time is 0 in the empty start (the first step replaces it: see above)
        empty = [const(np.zeros((0, *(d if isinstance(d, int) else 0 for d in t.shape[1:])), t.dtype), t.dtype)
                 for t in scan_types]
        result = ctx.typed(Call(gv, (const(0, "int64"), count, start, *inits, *empty, *outer)))
        return [TupleGetItem(result, k) for k in range(n_carried + n_scan)]


def _generalize(declared, computed):
    """``declared`` with the dimensions where ``computed`` differs made ``Any`` (same rank and dtype), else
    ``computed``."""
    if not (isinstance(declared, TensorType) and isinstance(computed, TensorType)) or declared == computed:
        return declared if declared == computed else computed
    if len(declared.shape) != len(computed.shape) or declared.dtype != computed.dtype:
        return computed
    dims = tuple(a if (not isinstance(a, Any) and a == b) else Any() for a, b in
                 zip(declared.shape, computed.shape, strict=True))
    return TensorType(dims, declared.dtype)


def _global_name(ctx, name):
    """A global function name for the node ``name`` not yet taken in the module."""
    base = "".join(c if c.isalnum() or c == "_" else "_" for c in name) + "_loop"
    taken = {gv.name_hint for gv in ctx.graph.mod.functions}
    candidate, k = base, 0
    while candidate in taken:
        k += 1
        candidate = f"{base}{k}"
    return candidate


@register("Scan")
class Scan(OnnxOpConverter):
    """Scan, unrolled over its static sequence length (see the module docstring)."""

    @classmethod
    def _impl_v8(cls, inputs, attr, ctx):
        """Opset 8: states and scan inputs lead with a batch axis (scan along axis 1) and ``sequence_lens`` comes
        first; each batch row is scanned as opset 9 scans, and the rows are stacked again."""
        lens, inputs = inputs[0], list(inputs[1:])
        n_scan_in = attr["num_scan_inputs"]
        batch = ctx.shape(inputs[0])[0]
        if not isinstance(batch, int):
            raise ctx.error("a batch known only at run time is not supported", OpNotImplemented)
        if lens is not None:
            values = ctx.value(lens, "sequence_lens")
            length = ctx.shape(inputs[-1])[1]
            if not (values == length).all():
                raise ctx.error(f"sequence_lens {values.tolist()} shorter than the sequence ({length}) are not "
                                f"supported", OpNotImplemented)
        attrs = {"num_scan_inputs": n_scan_in, "scan_input_directions": attr.get("directions", [0] * n_scan_in)}
        rows = []
        for b in range(batch):
            row = [_op.squeeze(_op.strided_slice(x, [b], [b + 1], axes=[0]), [0]) for x in inputs]
            rows.append(cls._impl_v9(row, dict(attrs, body=attr["body"]), ctx))
        return [_op.stack([r[k] for r in rows], 0) for k in range(len(rows[0]))]

    @classmethod
    def _impl_v9(cls, inputs, attr, ctx):
        body, name, node = attr["body"], ctx.name, ctx.node
        n_scan_in = attr["num_scan_inputs"]
        n_state = len(inputs) - n_scan_in
        states, scans = list(inputs[:n_state]), inputs[n_state:]
        n_scan_out = len(body.output) - n_state
        in_axes = [ctx.axis(a, ctx.ndim(x), "scan_input_axes") for a, x in
                   zip(attr.get("scan_input_axes", [0] * n_scan_in), scans, strict=True)]
        in_dirs = attr.get("scan_input_directions", [0] * n_scan_in)
        lengths = {ctx.shape(x)[a] for x, a in zip(scans, in_axes, strict=True)}
        if len(lengths) != 1 or not isinstance(next(iter(lengths)), int):
            raise ctx.error(f"the scan inputs must share one static sequence length, got {sorted(map(str, lengths))}")
        length = lengths.pop()
        elem_types = []
        for x, a in zip(scans, in_axes, strict=True):
            shape = ctx.shape(x)
            elem_types.append(TensorType(shape[:a] + shape[a + 1:], ctx.dtype(x)))
        body_vars = _subgraph_inputs(body, [ctx.typed(s).checked_type for s in states] + elem_types, ctx, "the body")
        outs = ctx.graph.convert_subgraph(body, f"{name}/body", ctx, {v.name_hint: v for v in body_vars})
        ctx.name, ctx.node = name, node
        collected: list = [[] for _ in range(n_scan_out)]
        for t in range(length):
            binds = dict(zip(body_vars, states, strict=False))
            for v, x, a, d in zip(body_vars[n_state:], scans, in_axes, in_dirs, strict=True):
                index = length - 1 - t if d else t
                binds[v] = _op.squeeze(_op.strided_slice(x, [index], [index + 1], axes=[a]), [a])
            step = [bind(o, binds) for o in outs]
            states = step[:n_state]
            for k, value in enumerate(step[n_state:]):
                collected[k].append(value)
        out_axes = attr.get("scan_output_axes", [0] * n_scan_out)
        out_dirs = attr.get("scan_output_directions", [0] * n_scan_out)
        results = []
        for k, values in enumerate(collected):
            if not values:
                raise ctx.error("a Scan over an empty sequence has no scan outputs to stack", OpNotImplemented)
            ndim = ctx.ndim(ctx.typed(values[0])) + 1
            values = values[::-1] if out_dirs[k] else values
            results.append(_op.stack(values, ctx.axis(out_axes[k], ndim, "scan_output_axes")))
        return states + results
