"""``adv_index``, ``matrix_set_diag``, ``segment_sum``, ``image.affine_grid``, ``image.grid_sample`` and
``vision.yolo_reorg`` against numpy, in the reference interpreter and compiled for llvm and c."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import TypeInferenceError
from kiln.topi.testing import grid_sample_python

from .checks import check

RNG = np.random.default_rng(37)


def v(name, shape, dtype="float32"):
    return relay.var(name, shape=shape, dtype=dtype)


def test_adv_index():
    a = RNG.standard_normal((4, 3, 2)).astype("float32")
    i0, i1 = np.array([[0, 3], [2, 1]], "int64"), np.array([2, 0], "int32")
    check(relay.adv_index([v("a", a.shape), v("i", i0.shape, "int64"), v("j", i1.shape, "int32")]),
          {"a": a, "i": i0, "j": i1}, a[i0, i1])


@pytest.mark.parametrize("k,align", [(0, "RIGHT_LEFT"), (1, "RIGHT_LEFT"), ((-1, 1), "RIGHT_LEFT"),
                                     ((-1, 1), "LEFT_RIGHT")])
def test_matrix_set_diag(k, align):
    a = RNG.standard_normal((2, 3, 4)).astype("float32")
    k1, k2 = (k, k) if isinstance(k, int) else k
    lengths = {d: min(3 + min(0, d), 4 - max(0, d)) for d in range(k1, k2 + 1)}
    max_len = max(lengths.values())
    diag = RNG.standard_normal((2,) + ((k2 - k1 + 1,) if k1 != k2 else ()) + (max_len,)).astype("float32")
    want = a.copy()
    for d in range(k1, k2 + 1):
        row = diag if k1 == k2 else diag[:, k2 - d]
        right = align.startswith("RIGHT") if d >= 0 else align.endswith("RIGHT")
        off = max_len - lengths[d] if right else 0
        for n in range(lengths[d]):
            r, c = (n, n + d) if d >= 0 else (n - d, n)
            want[:, r, c] = row[:, n + off]
    check(relay.matrix_set_diag(v("a", a.shape), v("d", diag.shape), k, align), {"a": a, "d": diag}, want)
    with pytest.raises(TypeInferenceError, match="matrix_set_diag"):
        relay.infer_type(relay.matrix_set_diag(v("a", a.shape), v("d", (2, 7)), 0))


def test_segment_sum():
    a = RNG.standard_normal((5, 3)).astype("float32")
    ids = np.array([2, 0, 0, 2, 1], "int32")
    want = np.zeros((3, 3), "float32")
    np.add.at(want, ids, a)
    check(relay.segment_sum(v("a", a.shape), relay.const(ids)), {"a": a}, want)
    want4 = np.zeros((4, 3), "float32")
    np.add.at(want4, ids, a)
    check(relay.segment_sum(v("a", a.shape), v("s", (5,), "int32"), 4), {"a": a, "s": ids}, want4, targets=("c",))


@pytest.mark.parametrize("num_segments", [None, 5])
def test_segment_sum_with_ids_known_at_run_time(num_segments):
    """Ids that are an input (the number of segments is their maximum + 1) and a data shape known only at run
    time: the VM sizes the result when it runs; rows past the last id are not summed (TVM's rule)."""
    a = RNG.standard_normal((6, 2, 3))
    ids = np.array([1, 3, 3, 0, 1], "int64")
    want = np.zeros((num_segments or 4, 2, 3))
    np.add.at(want, ids, a[:5])
    data = relay.var("a", shape=(relay.Any(), 2, relay.Any()), dtype="float64")
    segment_ids = relay.var("s", shape=(relay.Any(),), dtype="int64")
    func = relay.Function([data, segment_ids], relay.segment_sum(data, segment_ids, num_segments))
    for kind in ("debug", "vm"):
        out = relay.create_executor(kind, mod=kiln.IRModule.from_expr(func), target="llvm").evaluate()(a, ids)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-12)


def test_affine_grid():
    theta = RNG.standard_normal((2, 2, 3)).astype("float32")
    ys, xs = np.meshgrid(np.linspace(-1, 1, 4), np.linspace(-1, 1, 5), indexing="ij")
    base = np.stack([xs, ys, np.ones_like(xs)])  # (3, 4, 5)
    want = np.einsum("nrk,khw->nrhw", theta, base).astype("float32")
    check(relay.image.affine_grid(v("t", theta.shape), (4, 5)), {"t": theta}, want)


def naive_grid_sample(data, grid, method, padding, align):
    n, c, h, w = data.shape
    out = np.zeros((n, c) + grid.shape[2:], "float32")

    def unnorm(g, size):
        return (g + 1) * (size - 1) / 2 if align else ((g + 1) * size - 1) / 2

    def reflect(x, size):
        lo, span = (0.0, 2.0 * (size - 1)) if align else (-0.5, 2.0 * size)
        d = abs(x - lo)
        flips = np.floor(d / (span / 2))
        extra = d - flips * span / 2
        x = extra + lo if int(flips) % 2 == 0 else span / 2 + lo - extra
        return min(max(x, 0), size - 1)

    for b in range(n):
        for y in range(grid.shape[2]):
            for x in range(grid.shape[3]):
                px, py = unnorm(float(grid[b, 0, y, x]), w), unnorm(float(grid[b, 1, y, x]), h)
                if padding == "border":
                    px, py = min(max(px, 0), w - 1), min(max(py, 0), h - 1)
                elif padding == "reflection":
                    px, py = reflect(px, w), reflect(py, h)

                def pix(yi, xi, b=b):
                    return data[b, :, yi, xi] if 0 <= yi < h and 0 <= xi < w else 0.0

                if method == "nearest":
                    out[b, :, y, x] = pix(int(np.rint(py)), int(np.rint(px)))
                    continue
                y0, x0 = int(np.floor(py)), int(np.floor(px))
                ty, tx = py - y0, px - x0
                out[b, :, y, x] = (pix(y0, x0) * (1 - ty) * (1 - tx) + pix(y0, x0 + 1) * (1 - ty) * tx
                                   + pix(y0 + 1, x0) * ty * (1 - tx) + pix(y0 + 1, x0 + 1) * ty * tx)
    return out


@pytest.mark.parametrize("method,padding,align", [("bilinear", "zeros", True), ("bilinear", "border", False),
                                                  ("bilinear", "reflection", True), ("nearest", "zeros", False),
                                                  ("bilinear", "reflection", False)])
def test_grid_sample(method, padding, align):
    data = RNG.standard_normal((2, 3, 4, 5)).astype("float32")
    grid = RNG.uniform(-1.3, 1.3, (2, 2, 3, 6)).astype("float32")
    want = naive_grid_sample(data, grid, method, padding, align)
    check(relay.image.grid_sample(v("d", data.shape), v("g", grid.shape), method, "NCHW", padding, align),
          {"d": data, "g": grid}, want, rtol=1e-4)


@pytest.mark.parametrize("padding,align", [("zeros", True), ("border", False), ("reflection", False)])
def test_grid_sample_bicubic_and_3d(padding, align):
    """Compiled against :func:`kiln.topi.testing.grid_sample_python` (checked against scalar loops in
    tests/topi/testing/test_grid.py)."""
    data = RNG.standard_normal((2, 3, 4, 5)).astype("float32")
    grid = RNG.uniform(-1.3, 1.3, (2, 2, 3, 6)).astype("float32")
    want = grid_sample_python(data, grid, "bicubic", "NCHW", padding, align)
    check(relay.image.grid_sample(v("d", data.shape), v("g", grid.shape), "bicubic", "NCHW", padding, align),
          {"d": data, "g": grid}, want, rtol=1e-4)
    volume = RNG.standard_normal((1, 2, 3, 4, 5)).astype("float32")
    grid = RNG.uniform(-1.3, 1.3, (1, 3, 2, 3, 4)).astype("float32")
    for method in ("bilinear", "nearest"):
        want = grid_sample_python(volume, grid, method, "NCDHW", padding, align)
        check(relay.image.grid_sample(v("d", volume.shape), v("g", grid.shape), method, "NCDHW", padding, align),
              {"d": volume, "g": grid}, want, rtol=1e-4)


def test_yolo_reorg():
    a = RNG.standard_normal((2, 8, 4, 6)).astype("float32")
    s, out_c = 2, 2
    flat = a.reshape(-1)
    want = np.zeros(a.size, "float32")
    cnt = 0
    for b in range(2):
        for k in range(8):
            for j in range(4):
                for i in range(6):
                    offset = k // out_c
                    w2, h2 = i * s + offset % s, j * s + offset // s
                    want[cnt] = flat[w2 + 6 * s * (h2 + 4 * s * (k % out_c + out_c * b))]
                    cnt += 1
    check(relay.vision.yolo_reorg(v("a", a.shape), 2), {"a": a}, want.reshape(2, 32, 2, 3))


def test_invert_permutation_and_reverse_reshape():
    perm = np.array([3, 0, 4, 1, 2], "int32")
    check(relay.invert_permutation(v("p", (5,), "int32")), {"p": perm}, np.argsort(perm).astype("int32"))
    a = RNG.standard_normal((10, 5, 4)).astype("float32")
    out = relay.contrib_reverse_reshape(v("a", a.shape), (-1, 0))
    assert relay.infer_type(out).checked_type.shape == (50, 4)
    check(out, {"a": a}, a.reshape(50, 4))


def test_strided_set():
    a, val = RNG.standard_normal((5, 6)).astype("float32"), RNG.standard_normal((2, 3)).astype("float32")
    want = a.copy()
    want[1:5:2, 0:6:2] = val
    check(relay.strided_set(v("a", a.shape), v("v", val.shape), relay.const(np.array([1, 0], "int64")),
                            relay.const(np.array([5, 6], "int64")), relay.const(np.array([2, 2], "int64"))),
          {"a": a, "v": val}, want)


def test_sparse_reshape():
    idx = np.array([[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0], [1, 2, 3]], "int64")
    prev, new = np.array([2, 3, 6], "int64"), np.array([9, -1], "int64")
    flat = np.ravel_multi_index(idx.T, (2, 3, 6))
    want = np.stack(np.unravel_index(flat, (9, 4)), axis=1).astype("int64")
    out = relay.sparse_reshape(v("i", idx.shape, "int64"), v("p", (3,), "int64"), v("n", (2,), "int64"))
    check(relay.Tuple([out[0], out[1]]), {"i": idx, "p": prev, "n": new}, (want, np.array([9, 4], "int64")))


@pytest.mark.parametrize("prev,new", [((2, 3, 6), (4, -1, 3)), ((6, 6), (6, -1)), ((36,), (3, 3, 4))])
def test_sparse_reshape_with_ranks_known_at_run_time(prev, new):
    """Every shape an input of unknown length: the VM sizes the results; an unchanged shape keeps the
    coordinates as they are (TVM's rule, even for one out of range)."""
    rng = np.random.default_rng(5)
    idx = np.stack([rng.integers(0, d, 6) for d in prev], axis=1).astype("int64")
    resolved = tuple(d if d >= 0 else int(np.prod(prev)) // -int(np.prod(new)) for d in new)
    want = np.stack(np.unravel_index(np.ravel_multi_index(idx.T, prev), resolved), axis=1)
    if resolved == prev:
        idx[0, -1] = prev[-1] + 3
        want = idx
    i, p, n = (relay.var(name, shape=(relay.Any(),) * rank, dtype="int64") for name, rank in (("i", 2), ("p", 1),
                                                                                               ("n", 1)))
    func = relay.Function([i, p, n], relay.sparse_reshape(i, p, n).astuple())
    for kind in ("debug", "vm"):
        out = relay.create_executor(kind, mod=kiln.IRModule.from_expr(func), target="llvm").evaluate()(
            idx, np.array(prev, "int64"), np.array(new, "int64"))
        np.testing.assert_array_equal(out[0].numpy(), want)
        np.testing.assert_array_equal(out[1].numpy(), resolved)


def test_fixed_point_multiply():
    a = RNG.integers(-1000, 1000, (3, 4)).astype("int32")
    mult, shift = 1395864371, -3  # about 0.65 / 8
    want = ((a.astype("int64") * mult + (1 << 33)) >> 34).astype("int32")
    check(relay.fixed_point_multiply(v("a", a.shape, "int32"), mult, shift), {"a": a}, want)


def test_fifo_buffer_and_multibox_prior():
    buf, data = RNG.standard_normal((2, 5)).astype("float32"), RNG.standard_normal((2, 2)).astype("float32")
    check(relay.nn.fifo_buffer(v("d", data.shape), v("b", buf.shape), 1), {"d": data, "b": buf},
          np.concatenate([buf, data], 1)[:, 2:])
    feat = np.zeros((1, 3, 2, 3), "float32")
    sizes, ratios = (0.5, 0.25), (1.0, 2.0)
    want = []
    for i in range(2):
        for j in range(3):
            cy, cx = (i + 0.5) / 2, (j + 0.5) / 3
            for hw, hh in [(0.5 * 2 / 3 / 2, 0.25), (0.25 * 2 / 3 / 2, 0.125),
                           (0.5 * 2 / 3 * np.sqrt(2) / 2, 0.5 / np.sqrt(2) / 2)]:
                want.append([cx - hw, cy - hh, cx + hw, cy + hh])
    want = np.clip(np.array(want, "float32").reshape(1, -1, 4), 0, 1)
    check(relay.vision.multibox_prior(v("f", feat.shape), sizes, ratios, clip=True), {"f": feat}, want)


def test_fixed_point_multiply_per_axis():
    a = RNG.integers(-1000, 1000, (2, 3, 4)).astype("int32")
    mult = np.array([1395864371, 1073741824, 2000000000], "int32")
    shift = np.array([-3, 1, 0], "int32")
    want = np.zeros_like(a)
    for ch in range(3):
        left, right = max(int(shift[ch]), 0), max(-int(shift[ch]), 0) + 31
        wide = (a[:, ch].astype("int64") << left) * int(mult[ch]) + (1 << (right - 1))
        want[:, ch] = (wide >> right).astype("int32")
    expr = relay.fixed_point_multiply_per_axis(v("a", a.shape, "int32"), v("m", (3,), "int32"), v("s", (3,), "int32"),
                                               True, True, [1])
    check(expr, {"a": a, "m": mult, "s": shift}, want)
