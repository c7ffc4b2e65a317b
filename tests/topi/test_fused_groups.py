"""Fused groups of real networks lowered the way LowerTE lowers a ``Primitive`` function with topi, each checked
against the reference interpreter: placeholders for the parameters, each call through
``ScheduleBuilder`` (kiln/relay/backend/schedule_builder.py) in dataflow order (tuples flattened, ``TupleGetItem`` picking an output, scalar
constants as 0-d computes, other constants as extra parameters), the anchor's schedule for the group's outputs."""

import numpy as np
import pytest

import kiln
from kiln import relay, te
from kiln.ir import Op, TensorType
from kiln.relay.backend.schedule_builder import ScheduleBuilder
from kiln.relay.testing import resnet, transformer
from kiln.relay.testing.utils import evaluate, random_inputs, run_opt_pass
from kiln.target.build import build_passes
from kiln.tir import op as tir_op


def _constant(value):
    return lambda: value


def lower_primitive(func, target="llvm", name="fused"):
    """``func`` (a fused Primitive function) as (IRModule, constant arrays to pass after the parameters)."""
    params = [te.placeholder(p.checked_type.shape, p.checked_type.dtype, name=f"p{k}")
              for k, p in enumerate(func.params)]
    env = {p: [t] for p, t in zip(func.params, params, strict=True)}
    extra, extra_values = [], []
    builder = ScheduleBuilder(target)
    order = []
    relay.analysis.post_order_visit(func.body, order.append)
    for node in order:
        if node in env:
            continue
        if isinstance(node, relay.Call) and isinstance(node.op, Op):
            inputs = [t for a in node.args for t in env[a]]
            env[node] = builder.call(node.op, node.attrs, inputs, node.checked_type)
        elif isinstance(node, relay.Tuple):
            env[node] = [t for f in node.fields for t in env[f]]
        elif isinstance(node, relay.TupleGetItem):
            env[node] = [env[node.tuple_value][node.index]]
        elif isinstance(node, relay.Constant):
            value = node.data.numpy()
            if value.ndim == 0:
                env[node] = [te.compute((), _constant(tir_op.const(value.item(), str(value.dtype))), name="const")]
            else:
                t = te.placeholder(value.shape, str(value.dtype), name=f"c{len(extra)}")
                extra.append(t)
                extra_values.append(value)
                env[node] = [t]
    outs = env[func.body]
    s = builder.schedule(outs)
    return kiln.lower(s, params + extra + outs, name=name), extra_values, outs


def build_lowered(mod, target):
    """Compile an IRModule of already lowered PrimFuncs (kiln.build would run kiln.lower's passes on them again,
    which on unrolled convolution tiles doubles the compile time)."""
    target = kiln.target.Target(target)
    with target:
        mod = build_passes(mod, target)
    return kiln.get_global_func(f"target.build.{target.kind.name}")(mod, target)


def primitive_functions(func):
    found = []
    relay.analysis.post_order_visit(
        func, lambda n: found.append(n) if isinstance(n, relay.Function) and n.attrs and n.attrs.get("Primitive")
        else None)
    return found


def check_groups(main, rtol=1e-4, atol=1e-4):
    fused = run_opt_pass(main, [relay.transform.SimplifyInference(), relay.transform.FoldConstant(),
                                relay.transform.FuseOps(fuse_opt_level=2)])
    groups = primitive_functions(fused)
    assert groups
    seen, lowered, mod = set(), [], kiln.ir.IRModule()
    for k, func in enumerate(groups):
        key = kiln.ir.structural_hash(func)
        if key in seen:
            continue
        seen.add(key)
        part, extra_values, outs = lower_primitive(func, name=f"fused{k}")
        mod.update(part)
        lowered.append((f"fused{k}", func, extra_values, outs, k))
    lib = build_lowered(mod, "llvm")  # one compiler run for every group
    for name, func, extra_values, outs, k in lowered:
        # positive values: batch-norm variances must be, and NaN propagation through max differs from numpy's
        inputs = [np.abs(v) + np.asarray(0.1, v.dtype) if v.dtype.kind == "f" else v
                  for v in random_inputs(func, seed=k)]
        results = [kiln.nd.empty([int(d) for d in o.shape], o.dtype) for o in outs]
        lib[name](*[kiln.nd.array(v) for v in inputs + extra_values], *results)
        want = evaluate(func.with_fields(attrs=None), inputs)
        want = want if isinstance(want, tuple) else (want,)
        for got, w in zip(results, want, strict=True):
            np.testing.assert_allclose(got.numpy(), w, rtol=rtol, atol=atol, err_msg=str(func))
    return len(seen)


def test_resnet18_groups():
    main = resnet.get_net(num_layers=18, image_shape=(3, 32, 32), num_classes=10)
    assert check_groups(main) >= 8


@pytest.mark.slow
def test_resnet50_groups():
    main = resnet.get_net(num_layers=50, image_shape=(3, 64, 64), num_classes=16)
    assert check_groups(main) >= 10


def test_transformer_groups():
    main = transformer.get_net(batch=1, seq=8, hidden=32, heads=4, ffn=64)
    assert check_groups(main) >= 4


def test_group_types_are_the_relay_types():
    x = relay.var("x", shape=(1, 8, 6, 6))
    w = relay.var("w", shape=(16, 8, 3, 3))
    body = relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1)) * relay.const(2.0))
    func = run_opt_pass(relay.Function([x, w], body), relay.transform.FuseOps(fuse_opt_level=2))
    (group,) = primitive_functions(func)
    mod, extra, outs = lower_primitive(group)
    assert extra == [] and [int(d) for d in outs[0].shape] == list(group.body.checked_type.shape)
    assert isinstance(group.body.checked_type, TensorType)
    assert mod["fused"].attrs["global_symbol"] == "fused"
