"""image.resize2d (kiln/topi/image/resize.py): every method, coordinate mode and rounding method the reference
supports, up- and downscaling, against the numpy reference."""

import pytest

from kiln.relay.op.attrs import Resize2DAttrs

_MODES = ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn")


@pytest.mark.parametrize("method", ["nearest_neighbor", "linear", "cubic"])
def test_resize2d_modes(harness, target, method):
    x = harness.rand((1, 2, 5, 6), "float32", -3, 3)
    cases = []
    for mode in _MODES:
        for size in ((10, 12), (3, 4), (1, 7)):
            cases.append(harness.Case("image.resize2d", [x], Resize2DAttrs(size, method=method,
                                                                           coordinate_transformation_mode=mode),
                                      label=f"{method} {mode} {size}", rtol=1e-5, atol=1e-5))
    harness.run_cases(cases, target)


def test_resize2d_rounding_layouts_dtypes(harness, target):
    x = harness.rand((1, 7, 5, 3), "float32", -3, 3)
    nchw = harness.rand((1, 3, 4, 4), "float32", -3, 3)
    cases = [harness.Case("image.resize2d", [nchw], Resize2DAttrs((9, 7), method="nearest_neighbor",
                                                                   coordinate_transformation_mode="half_pixel",
                                                                   rounding_method=r), label=f"rounding {r}")
             for r in ("round", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil")]
    cases += [
        harness.Case("image.resize2d", [x], Resize2DAttrs((9, 4), layout="NHWC"), label="NHWC linear", rtol=1e-5,
                     atol=1e-5),
        harness.Case("image.resize2d", [nchw], Resize2DAttrs((8, 8), method="cubic", cubic_alpha=-0.75,
                                                             cubic_exclude=1), label="cubic exclude", rtol=1e-5,
                     atol=1e-5),
        harness.Case("image.resize2d", [harness.rand((1, 1, 4, 4), "int32", 0, 100)],
                     Resize2DAttrs((6, 5), method="linear"), label="int data"),
        harness.Case("image.resize2d", [nchw], Resize2DAttrs((8, 8), method="nearest_neighbor",
                                                             coordinate_transformation_mode="asymmetric"),
                     label="asymmetric integer factor"),
        harness.Case("image.resize2d", [nchw], Resize2DAttrs((5, 6), method="linear", out_dtype="int32"),
                     label="out_dtype int32"),
    ]
    harness.run_cases(cases, target)
