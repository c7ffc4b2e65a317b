"""image.resize2d (kiln/topi/image/resize.py): every method, coordinate mode and rounding method the reference
supports, up- and downscaling, against the numpy reference."""

import numpy as np
import pytest

from kiln.relay.op.attrs import Resize2DAttrs
from kiln.topi.testing.resize import resize

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


def test_resize_tf_crop_and_resize_and_3d(harness, target):
    """The crop mode with its extrapolation, and resize1d/3d (one compute over all spatial axes), against the numpy
    reference (kiln/topi/testing/resize.py)."""
    from kiln.relay.op.attrs_image import Resize1DAttrs, Resize3DAttrs

    x = harness.rand((1, 2, 5, 6), "float32", -3, 3)
    roi = (-0.2, 0.1, 0.9, 1.3)
    cases = [harness.Case("image.resize2d", [x], Resize2DAttrs((7, 4), roi, method=m,
                                                               coordinate_transformation_mode="tf_crop_and_resize",
                                                               extrapolation_value=-2.0), label=f"crop {m}",
                          rtol=1e-5, atol=1e-5)
             for m in ("nearest_neighbor", "linear", "cubic")]
    v = harness.rand((1, 2, 3, 4, 5), "float32", -3, 3)
    cases += [harness.Case("image.resize3d", [v], Resize3DAttrs((5, 3, 7), method=m,
                                                                coordinate_transformation_mode="align_corners"),
                           label=f"3-D {m}", rtol=1e-5, atol=1e-5) for m in ("nearest_neighbor", "linear", "cubic")]
    cases += [harness.Case("image.resize3d", [harness.rand((1, 3, 4, 2, 2), "uint8", 0, 255)],
                           Resize3DAttrs((2, 5, 3), layout="NDHWC", method="cubic"), label="3-D NDHWC uint8"),
              harness.Case("image.resize1d", [harness.rand((2, 7, 3), "float32", -3, 3)],
                           Resize1DAttrs((11,), layout="NWC", method="cubic"), label="1-D NWC", rtol=1e-5,
                           atol=1e-5)]
    harness.run_cases(cases, target)


def test_integer_results_are_the_exact_blend_truncated_on_every_target(harness, target):
    """Column 1 of 3 -> 5 (asymmetric) sits at 0.6, between 5 and 0: the exact blend is 2, but float32 puts the
    coordinate just above 0.6 and a blend just under 2, which truncated gave 1 or 2 by the target's choice to contract
    a multiply-add (C and LLVM differed). Integer results snap to a whole number first, in float64."""
    data = np.array([[[[5, 0, 5]], [[0, 5, 0]]]], dtype="uint16")
    assert int(5 - 5 * float(np.float32(0.6))) == 1
    want = resize(data, (1, 5), "NCHW", "linear", "asymmetric")
    assert want[0, :, 0].tolist() == [[5, 2, 1, 4, 5], [0, 3, 4, 1, 0]]
    attrs = Resize2DAttrs((1, 5), method="linear", coordinate_transformation_mode="asymmetric")
    harness.run_cases([harness.Case("image.resize2d", [data], attrs, label="uint16 linear"),
                       harness.Case("image.resize2d", [data.astype("int8")], Resize2DAttrs(
                           (1, 5), method="cubic", coordinate_transformation_mode="asymmetric"), label="int8 cubic")],
                      target)
