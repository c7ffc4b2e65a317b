"""get_pad_tuple*: per-side padding from TVM's padding forms, checked against the definition (SAME pads kernel-1
in all, the larger half first) and against the padded-convolution output size."""

import pytest

from kiln.error import OpAttributeInvalid
from kiln.topi.nn.utils import get_pad_tuple, get_pad_tuple1d, get_pad_tuple3d


@pytest.mark.parametrize("kernel", [(1, 1), (3, 3), (4, 5), (7, 2)])
def test_same_keeps_the_size_at_stride_one(kernel):
    top, left, bottom, right = get_pad_tuple("SAME", kernel)
    for size in (5, 8, 13):
        assert size + top + bottom - kernel[0] + 1 == size
        assert size + left + right - kernel[1] + 1 == size
    assert top - bottom in (0, 1) and left - right in (0, 1)


def test_forms():
    assert get_pad_tuple("VALID", (3, 3)) == (0, 0, 0, 0)
    assert get_pad_tuple(2, (3, 3)) == (2, 2, 2, 2)
    assert get_pad_tuple((1, 3), (3, 3)) == (1, 3, 1, 3)
    assert get_pad_tuple((1, 2, 3, 4), (3, 3)) == (1, 2, 3, 4)
    assert get_pad_tuple1d("SAME", 4) == (2, 1)
    assert get_pad_tuple1d(3, (2,)) == (3, 3)
    assert get_pad_tuple3d("SAME", (3, 4, 5)) == (1, 2, 2, 1, 1, 2)


def test_bad_padding():
    with pytest.raises(OpAttributeInvalid, match="unknown padding option"):
        get_pad_tuple("FULL", (3, 3))
    with pytest.raises(OpAttributeInvalid, match="2 or 4 values"):
        get_pad_tuple((1, 2, 3), (3, 3))
