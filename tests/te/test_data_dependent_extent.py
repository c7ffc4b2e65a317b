"""A reduction whose extent is read from a tensor, per output element (``vision.roi_align``'s adaptive sampling
grid): the extent's tensor is an input of the operation, and the loop bound reads its buffer after the schedule
moved the axes."""

import numpy as np
import pytest

import kiln
from kiln import te

from ..target.conftest import TARGETS


@pytest.mark.parametrize("target", TARGETS)
def test_reduce_over_a_length_read_from_a_tensor(target):
    a = te.placeholder((4, 8), name="A")
    n = te.placeholder((4,), "int32", name="N")

    def row_sum(i):
        k = te.reduce_axis((0, n[i]), name="k")
        return te.sum(a[i, k], axis=[k])

    b = te.compute((4,), row_sum, name="B")
    assert n in b.op.input_tensors
    s = te.create_schedule(b.op)
    io, ii = s[b].split(b.op.axis[0], 2)
    m = kiln.build(s, [a, n, b], target)
    data = np.random.default_rng(0).random((4, 8)).astype("float32")
    lengths = np.array([1, 3, 8, 0], "int32")
    out = kiln.nd.empty((4,), "float32")
    m(kiln.nd.array(data), kiln.nd.array(lengths), out)
    np.testing.assert_allclose(out.numpy(), [data[i, :lengths[i]].sum() for i in range(4)], rtol=1e-6)
