"""Layout predicates of kiln/topi/utils.py that TVM's topi tests import."""

from kiln.topi.utils import nchw_pack_layout, nchw_xc_layout


def test_packed_nchw_layout_kinds():
    assert nchw_pack_layout("NCHW1n16c") and not nchw_pack_layout("NCHW16c") and not nchw_pack_layout("NHWC")
    assert nchw_xc_layout("NCHW16c") and not nchw_xc_layout("NCHW1n16c") and not nchw_xc_layout("NCHW")
