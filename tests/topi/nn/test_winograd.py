"""kiln/topi/nn/winograd.py: the Winograd tile-size choice, also reached at TVM's topi.cuda paths."""

import numpy as np

from kiln import te
from kiln.topi.nn.winograd import infer_tile_size


def test_tile_size_follows_the_height():
    assert infer_tile_size(np.zeros((1, 3, 16, 7)), None) == 4
    assert infer_tile_size(np.zeros((1, 3, 12, 8)), None) == 2
    assert infer_tile_size(te.placeholder((1, 16, 9, 3)), None, "NHWC") == 4
    assert infer_tile_size(np.zeros((1, 2, 5, 24, 8)), None) == 4  # NCDHW: the height is the fourth axis
    assert infer_tile_size(np.zeros((1, 5, 12, 8, 2)), None, "NDHWC") == 2


def test_tvm_device_paths_hold_target_independent_computes():
    """topi.cuda (and topi.mali) answer TVM's names with the target-independent Winograd computes and
    thread-binding schedules; the helpers stay where TVM keeps them."""
    import kiln.topi.cuda
    from kiln.topi.cuda.conv2d_winograd import _infer_tile_size as tile2d
    from kiln.topi.cuda.conv3d_winograd import _infer_tile_size as tile3d

    assert tile2d is infer_tile_size and tile3d is infer_tile_size
    cuda = kiln.topi.cuda
    assert cuda.schedule_conv2d_nchw_winograd is cuda.schedule_conv3d_ncdhw_winograd is \
        cuda.schedule_conv2d_nhwc_winograd_direct is kiln.topi.mali.schedule_conv2d_nchw_winograd
    assert kiln.topi.mali.conv2d_nchw_winograd is cuda.conv2d_nchw_winograd


def test_matrices_compute_a_correlation():
    """A^T [(G g) * (B^T d)] is the valid correlation of d with g, for every supported tile and kernel size."""
    from kiln.topi.nn.winograd import winograd_matrices

    rng = np.random.default_rng(5)
    for m in range(2, 9):
        for r in range(3, 8):
            a_mat, b_mat, g_mat = winograd_matrices(m, r)
            assert a_mat.shape == (m + r - 1, m) and b_mat.shape == (m + r - 1,) * 2 and g_mat.shape == (m + r - 1, r)
            d, g = rng.standard_normal(m + r - 1), rng.standard_normal(r)
            want = np.correlate(d, g, mode="valid")
            np.testing.assert_allclose(a_mat.T @ ((g_mat @ g) * (b_mat.T @ d)), want, rtol=1e-9, atol=1e-8)


def test_f2x3_is_the_textbook_transform():
    """F(2, 3) on the points 0, -1, 1 and infinity: Lavin & Gray's matrices up to the signs of a point's row."""
    from kiln.topi.nn.winograd import winograd_matrices

    a_mat, b_mat, g_mat = winograd_matrices(2, 3)
    np.testing.assert_array_equal(a_mat, [[1, 0], [1, -1], [1, 1], [0, 1]])
    np.testing.assert_array_equal(g_mat, [[1, 0, 0], [0.5, -0.5, 0.5], [0.5, 0.5, 0.5], [0, 0, 1]])
    np.testing.assert_array_equal(b_mat.T, [[1, 0, -1, 0], [0, -1, 1, 0], [0, 1, 1, 0], [0, -1, 0, 1]])


def test_unsupported_sizes_are_refused():
    import pytest

    from kiln.error import OpAttributeInvalid
    from kiln.topi.nn.winograd import winograd_matrices, winograd_transform_matrices

    with pytest.raises(OpAttributeInvalid, match="unsupported tile size 9"):
        winograd_matrices(9, 3)
    with pytest.raises(OpAttributeInvalid, match="unsupported kernel size 2"):
        winograd_transform_matrices(2, 2, "float32")
