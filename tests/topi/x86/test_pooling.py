"""The knobs of the pooling and reduction templates (kiln/topi/x86/pooling.py ``pool2d.x86``/``global_pool.x86``,
kiln/topi/x86/reduction.py ``reduce.x86``): every inner split, vectorization and parallel choice computes what
numpy does; and where the pooling schedule reads its padding from."""

import numpy as np
import pytest

import kiln
from kiln import autotvm, te, tir, topi
from kiln.tir.stmt_functor import pre_order_visit
from kiln.topi.testing.pool import poolnd_python

TARGET = "llvm"


def _run_every_config(task, arrays, ref):
    assert len(task.config_space) > 1
    for config in task.config_space:
        s, tensors = task.instantiate(config)
        lib = kiln.build(s, tensors, target=TARGET, name="f")
        out = kiln.nd.array(np.zeros(ref.shape, ref.dtype))
        lib["f"](*[kiln.nd.array(a) for a in arrays], out)
        np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-5, err_msg=str(config))


@pytest.mark.parametrize("pool_type", ["max", "avg"])
def test_pool2d_template_matches_numpy_under_every_config(pool_type):
    x = np.random.default_rng(0).standard_normal((1, 3, 9, 16)).astype("float32")
    args = (("TENSOR", x.shape, "float32"), (3, 3), (1, 1), (1, 1), (1, 1, 1, 1), pool_type, False, "NCHW", False, "")
    task = autotvm.task.create("pool2d.x86", args, TARGET)
    assert task.config_space.knob_names() == ["tile_inner", "vectorize", "parallel"]
    ref = poolnd_python(x, (3, 3), (1, 1), (1, 1), (1, 1), (1, 1), pool_type, count_include_pad=False)
    _run_every_config(task, [x], ref.astype("float32"))


def test_global_pool_template_matches_numpy_under_every_config():
    x = np.random.default_rng(1).standard_normal((1, 2, 5, 5, 8)).astype("float32")
    task = autotvm.task.create("global_pool.x86", (("TENSOR", x.shape, "float32"), "avg", "NCHW8c", ""), TARGET)
    _run_every_config(task, [x], x.mean(axis=(2, 3), keepdims=True))


@pytest.mark.parametrize("name,axis", [("sum", (1,)), ("max", (1,)), ("argmax", (1,)), ("mean", (2,))])
def test_reduce_template_matches_numpy_under_every_config(name, axis):
    x = np.random.default_rng(2).standard_normal((2, 5, 16)).astype("float32")
    task = autotvm.task.create("reduce.x86", (("TENSOR", x.shape, "float32"), name, axis, False, False, False), TARGET)
    ref = {"sum": np.sum, "max": np.max, "mean": np.mean}.get(name, np.argmax)(x, axis=axis[0])
    _run_every_config(task, [x], ref.astype("int32" if name == "argmax" else "float32"))


@pytest.mark.parametrize("layout, shape, padded_copy", [("NCHW16c", (1, 2, 11, 12, 16), False),
                                                        ("NHWC", (1, 11, 12, 24), False),
                                                        ("NCHW", (1, 3, 11, 16), True)])
@pytest.mark.parametrize("pool_type, include_pad", [("max", False), ("avg", True), ("avg", False)])
def test_padding_is_guarded_unless_it_pads_the_vector_axis(layout, shape, padded_copy, pool_type, include_pad):
    """A padding of the spatial axes is read through guards when the vector runs along channels, and copied first
    when it pads the vectorized innermost axis; the results are numpy's either way (borders included)."""
    x = te.placeholder(shape, name="x")
    y = topi.nn.pool2d(x, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), pool_type, layout=layout,
                       count_include_pad=include_pad)
    s = topi.x86.schedule_pool([y], target=TARGET)
    allocs = []
    pre_order_visit(kiln.lower(s, [x, y], name="f")["f"].body,
                    lambda n: allocs.append(n.buffer_var.name_hint) if isinstance(n, tir.Allocate) else None)
    assert ("pad_temp" in allocs) == padded_copy, allocs
    data = np.random.default_rng(2).standard_normal(shape).astype("float32")
    to_nchw = {"NCHW16c": lambda a: a.transpose(0, 1, 4, 2, 3).reshape(a.shape[0], -1, a.shape[2], a.shape[3]),
               "NHWC": lambda a: a.transpose(0, 3, 1, 2), "NCHW": lambda a: a}[layout]
    ref = poolnd_python(to_nchw(data), (3, 3), (2, 2), (1, 1), (1, 1), (1, 1), pool_type,
                        count_include_pad=include_pad).astype("float32")
    out = kiln.nd.array(np.zeros([int(d) for d in y.shape], "float32"))
    kiln.build(s, [x, y], target=TARGET, name="f")["f"](kiln.nd.array(data), out)
    np.testing.assert_allclose(to_nchw(out.numpy()), ref, rtol=1e-5, atol=1e-5)
