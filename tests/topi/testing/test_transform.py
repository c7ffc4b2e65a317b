"""kiln.topi.testing.transform (TVM's space_to_batch_nd_python, batch_to_space_nd_python, strided_set_python)
against the element formulas."""

import itertools

import numpy as np
import pytest

from kiln.error import OpAttributeInvalid
from kiln.topi import testing as ref

RNG = np.random.default_rng(2)


def test_space_to_batch_nd_element_formula_and_inverse():
    data = RNG.standard_normal((2, 3, 4, 5)).astype("float32")
    got = ref.space_to_batch_nd_python(data, [2, 3], [1, 0], [0, 2], pad_value=7.0)
    padded = np.pad(data, ((0, 0), (1, 0), (0, 2), (0, 0)), constant_values=7.0)
    assert got.shape == (12, 2, 2, 5)
    for bh, bw, n, i, j in itertools.product(range(2), range(3), range(2), range(2), range(2)):
        np.testing.assert_array_equal(got[(bh * 3 + bw) * 2 + n, i, j], padded[n, i * 2 + bh, j * 3 + bw])
    back = ref.batch_to_space_nd_python(got, [2, 3], [1, 0], [0, 2])
    np.testing.assert_array_equal(back, data)
    with pytest.raises(OpAttributeInvalid, match="multiples"):
        ref.space_to_batch_nd_python(data, [2], [0], [0])
    with pytest.raises(OpAttributeInvalid, match="batch"):
        ref.batch_to_space_nd_python(data, [4], [0], [0])


def test_strided_set_python():
    data = RNG.standard_normal((5, 6)).astype("float32")
    v = RNG.standard_normal((2, 3)).astype("float32")
    got = ref.strided_set_python(data, v, [1, 5], [5, 0], [2, -2])
    want = data.copy()
    for a, i in enumerate(range(1, 5, 2)):
        for b, j in enumerate(range(5, 0, -2)):
            want[i, j] = v[a, b]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(ref.strided_set_python(data, 0.0, [2], [3], None)[2], np.zeros(6))
    assert not (data == 0).any()  # the input is not written
