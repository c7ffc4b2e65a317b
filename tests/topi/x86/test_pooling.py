"""The knobs of the pooling and reduction templates (kiln/topi/x86/pooling.py ``pool2d.x86``/``global_pool.x86``,
kiln/topi/x86/reduction.py ``reduce.x86``): every inner split, vectorization and parallel choice computes what
numpy does."""

import numpy as np
import pytest

import kiln
from kiln import autotvm
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
