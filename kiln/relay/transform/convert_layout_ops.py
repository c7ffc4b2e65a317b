"""``FTVMConvertOpLayout`` of the convolution-like, resize and ROI operators (TVM's registrations in
``relay/op/nn/_nn.py``, ``image/_image.py`` and ``vision/_rcnn.py``); conv2d's and the poolings' are in
:mod:`.convert_layout`.

Each returns the operator rebuilt with the desired layouts over the given inputs; ``"default"`` for a kernel picks the
kernel layout that goes with the data layout (the table below, TVM's).
"""

from ...error import KilnError
from ..op import image as _image
from ..op import nn as _nn
from ..op import vision as _vision
from ..op.op import register_convert_op_layout

__all__ = ["DEFAULT_KERNEL_LAYOUTS", "LayoutConfig", "skip_layer"]


class LayoutConfig:
    """Which convolutions ConvertLayout leaves alone (TVM's ``relay.transform.LayoutConfig``): within ``with
    LayoutConfig(skip_layers=[0, 3]):`` the first and fourth conv2d (or deformable_conv2d) converted are kept in
    their layouts.
    """

    current: "LayoutConfig | None" = None

    def __init__(self, skip_layers=None):
        self.skip_counter = 0
        self.skip_layers = list(skip_layers) if skip_layers is not None else []
        self._previous: LayoutConfig | None = None

    def check_skip(self) -> bool:
        """Whether the next layer is skipped (counts it)."""
        skip = self.skip_counter in self.skip_layers
        self.skip_counter += 1
        return skip

    def reset(self):
        """Forget the count and the layers to skip."""
        self.skip_counter = 0
        self.skip_layers = []

    def __enter__(self):
        self._previous, LayoutConfig.current = LayoutConfig.current, self
        return self

    def __exit__(self, *exc):
        LayoutConfig.current = self._previous


def skip_layer() -> bool:
    """Whether the current :class:`LayoutConfig` skips the convolution being converted."""
    return LayoutConfig.current is not None and LayoutConfig.current.check_skip()

DEFAULT_KERNEL_LAYOUTS = {
    "nn.conv2d_transpose": {"NCHW": "IOHW", "NHWC": "HWIO"},
    "nn.conv3d": {"NCDHW": "OIDHW", "NDHWC": "DHWIO"},
    "nn.conv3d_transpose": {"NCDHW": "IODHW", "NDHWC": "DHWOI"},
    "nn.deformable_conv2d": {"NCHW": "OIHW", "NHWC": "HWIO"},
}
"""Operator -> data layout -> the kernel layout ``"default"`` stands for."""


def _desired(name, desired_layouts, count):
    layouts = [str(lay) for lay in desired_layouts]
    if len(layouts) != count:
        raise KilnError(f"ConvertLayout: {name} needs {count} desired layouts, got {layouts}")
    if layouts[0] == "default":
        raise KilnError(f"ConvertLayout: the data layout of {name} cannot be 'default'")
    return layouts


def _convert_conv(name, builder):
    def convert(attrs, inputs, tinfos, desired_layouts):
        if name == "nn.deformable_conv2d" and skip_layer():  # counted with conv2d, as TVM's
            return builder(*inputs, **attrs)
        data_layout, kernel_layout = _desired(name, desired_layouts, 2)
        if kernel_layout == "default":
            kernel_layout = DEFAULT_KERNEL_LAYOUTS[name].get(data_layout)
            if kernel_layout is None:
                raise KilnError(f"ConvertLayout: {name} has no default kernel layout for data layout {data_layout}")
        return builder(*inputs, **dict(attrs, data_layout=data_layout, kernel_layout=kernel_layout))

    convert.__name__ = f"convert_{builder.__name__}"
    convert.__doc__ = f"{name} in the desired ``[data_layout, kernel_layout]`` (``default``: TVM's kernel layout)."
    return convert


for _name, _builder in (("nn.conv2d_transpose", _nn.conv2d_transpose), ("nn.conv3d", _nn.conv3d),
                        ("nn.conv3d_transpose", _nn.conv3d_transpose),
                        ("nn.deformable_conv2d", _nn.deformable_conv2d)):
    register_convert_op_layout(_name, _convert_conv(_name, _builder))


def _convert_resize(name, builder):
    def convert(attrs, inputs, tinfos, desired_layouts):
        (layout,) = _desired(name, desired_layouts, 1)
        return builder(*inputs, **dict(attrs, layout=layout))

    convert.__name__ = f"convert_{builder.__name__}"
    convert.__doc__ = f"{name} in the desired layout."
    return convert


register_convert_op_layout("image.resize1d", _convert_resize("image.resize1d", _image.resize1d))
register_convert_op_layout("image.resize2d", _convert_resize("image.resize2d", _image.resize2d))


@register_convert_op_layout("vision.roi_align")
def convert_roi_align(attrs, inputs, tinfos, desired_layouts):
    """roi_align in the desired data layout (NCHW or NHWC); the boxes keep theirs (``"default"``)."""
    data_layout, rois_layout = _desired("vision.roi_align", desired_layouts, 2)
    if rois_layout != "default":
        raise KilnError(f"ConvertLayout: the rois layout of vision.roi_align must be 'default', got {rois_layout}")
    if data_layout not in ("NCHW", "NHWC"):
        raise KilnError(f"ConvertLayout: vision.roi_align does not support layout {data_layout}")
    return _vision.roi_align(*inputs, **dict(attrs, layout=data_layout))
