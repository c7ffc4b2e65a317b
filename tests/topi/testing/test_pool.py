"""kiln/topi/testing/pool.py: the pooling references against windows reduced one output element at a time."""

import itertools
import math

import numpy as np
import pytest

from kiln.error import OpAttributeInvalid
from kiln.topi import testing as ref

RNG = np.random.default_rng(5)


def loops_pool(x, kernel, strides, dil, before, after, kind, count_pad, ceil):
    """Each output cell gathers its window's in-bounds cells by index arithmetic."""
    nd = x.ndim - 2
    rnd = math.ceil if ceil else math.floor
    outs = [rnd((x.shape[2 + a] + before[a] + after[a] - (kernel[a] - 1) * dil[a] - 1) / strides[a]) + 1
            for a in range(nd)]
    out = np.zeros(x.shape[:2] + tuple(outs))
    for b, c in itertools.product(*map(range, x.shape[:2])):
        for pos in itertools.product(*map(range, outs)):
            cells, padded = [], 0
            for k in itertools.product(*map(range, kernel)):
                idx = [pos[a] * strides[a] + k[a] * dil[a] - before[a] for a in range(nd)]
                if all(0 <= i < x.shape[2 + a] for a, i in enumerate(idx)):
                    cells.append(x[(b, c, *idx)])
                elif all(-before[a] <= i < x.shape[2 + a] + after[a] for a, i in enumerate(idx)):
                    padded += 1
            count = len(cells) + (padded if count_pad else 0)
            out[(b, c, *pos)] = max(cells) if kind == "max" else (sum(cells) / count if count else 0)
    return out


@pytest.mark.parametrize("shape,kernel,strides,dil,before,after,ceil", [
    ((2, 3, 9), (3,), (2,), (1,), (1,), (0,), True),
    ((1, 2, 7, 8), (2, 3), (2, 2), (2, 1), (1, 0), (1, 2), False),
    ((1, 1, 5, 4, 6), (2, 2, 3), (2, 1, 2), (1, 1, 1), (0, 1, 1), (1, 0, 1), True),
])
@pytest.mark.parametrize("kind,count_pad", [("max", False), ("avg", False), ("avg", True)])
def test_poolnd_matches_window_loops(shape, kernel, strides, dil, before, after, ceil, kind, count_pad):
    x = RNG.standard_normal(shape).astype("float32") - 3  # negative: a padded zero must never win a max
    got = ref.poolnd_python(x, kernel, strides, dil, before, after, kind, count_pad, ceil)
    want = loops_pool(x, kernel, strides, dil, before, after, kind, count_pad, ceil)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_poolnd_layouts_and_integers():
    x = RNG.standard_normal((1, 6, 5, 3)).astype("float32")  # NHWC
    nchw = ref.poolnd_python(x.transpose(0, 3, 1, 2), (2, 2), (1, 2), (1, 1), (0, 1), (1, 0), "avg")
    nhwc = ref.poolnd_python(x, (2, 2), (1, 2), (1, 1), (0, 1), (1, 0), "avg", layout="NHWC")
    np.testing.assert_allclose(nhwc.transpose(0, 3, 1, 2), nchw)
    xi = np.array([[[-3, 4, -7, 2]]], "int32")
    assert ref.poolnd_python(xi, (2,), (2,), (1,), (0,), (0,), "avg", dtype="int32").tolist() == [[[0, -2]]]
    with pytest.raises(OpAttributeInvalid, match="pool_type"):
        ref.poolnd_python(xi, (2,), (2,), (1,), (0,), (0,), "sum")


@pytest.mark.parametrize("layout", ["NCW", "NCHW", "NHWC", "NDHWC"])
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_adaptive_pool_windows(layout, kind):
    spatial = {"NCW": (7,), "NCHW": (7, 5), "NHWC": (7, 5), "NDHWC": (4, 7, 5)}[layout]
    out_size = {"NCW": (3,), "NCHW": (3, 2), "NHWC": (3, 2), "NDHWC": (2, 3, 2)}[layout]
    first = (2, 3, *spatial)  # channels-first
    x = RNG.standard_normal(first)
    perm = [0, 1, *range(2, x.ndim)] if layout.startswith("NC") else [0, *range(2, x.ndim), 1]
    got = ref.adaptive_pool(x.transpose(perm), out_size, kind, layout).transpose(np.argsort(perm))
    reduce = np.max if kind == "max" else np.mean
    for pos in itertools.product(*map(range, out_size)):
        window = tuple(slice(p * n // o, -(-(p + 1) * n // o)) for p, n, o in zip(pos, spatial, out_size, strict=True))
        np.testing.assert_allclose(got[(slice(None), slice(None), *pos)],
                                   reduce(x[(slice(None), slice(None), *window)], axis=tuple(range(2, x.ndim))))


def test_a_max_window_of_padding_only_gives_the_lowest_value():
    x = np.ones((1, 1, 2), "float32")
    got = ref.poolnd_python(x, (2,), (2,), (1,), (2,), (0,), "max", False)  # TVM pads with 0 when True
    assert got.tolist() == [[[np.finfo("float32").min, 1.0]]]
    xi = np.ones((1, 1, 2), "int8")
    assert ref.poolnd_python(xi, (2,), (2,), (1,), (2,), (0,), "max", False, dtype="int8").tolist() == [[[-128, 1]]]


def test_max_with_count_include_pad_pads_with_zeros_as_tvms_reference():
    x = -np.ones((1, 1, 4), "float32")
    with_pad = ref.poolnd_python(x, (2,), (2,), (1,), (1,), (1,), "max", True)
    without = ref.poolnd_python(x, (2,), (2,), (1,), (1,), (1,), "max", False)
    assert with_pad.tolist() == [[[0.0, -1.0, 0.0]]] and without.tolist() == [[[-1.0, -1.0, -1.0]]]
