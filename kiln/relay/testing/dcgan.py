"""The generator of DCGAN (Radford et al., "Unsupervised Representation Learning with Deep Convolutional
Generative Adversarial Networks", 2015), as TVM's ``relay.testing.dcgan`` builds it for 64x64 images.

A dense layer from the random code to ``4 x 4 x 8 ngf`` features, ReLU, a reshape to a 4x4 feature map, three
transposed convolutions each doubling the size (with batch norm without scale and ReLU), a last transposed
convolution to the image's channels, and tanh. Parameters as in TVM (``dense_weight``, ``g2_deconv_weight``,
``g2_batch_norm_gamma``...).
"""

from ...error import KilnError
from .. import op as _op
from ..analysis import free_vars
from ..expr import var
from ..function import Function
from . import layers
from .init import create_workload


def deconv2d(data, ishape, oshape, kshape, layout, name, stride=(2, 2)):
    """A transposed convolution enlarging the feature map to ``oshape`` ``(channels, height, width)``; padding
    and output padding are chosen so the output has exactly that size."""
    pad = ((kshape[0] - 1) // 2, (kshape[1] - 1) // 2)
    adjust = tuple((oshape[k - 2] + 2 * pad[k] - kshape[k]) % stride[k] for k in range(2))
    kernel_layouts = {"NCHW": "IOHW", "NHWC": "HWOI"}
    if layout not in kernel_layouts:
        raise KilnError(f"dcgan: invalid layout {layout!r} (NCHW or NHWC)")
    return layers.conv2d_transpose(data, kernel_size=kshape, strides=stride, channels=oshape[0], padding=pad,
                                   output_padding=adjust, data_layout=layout, kernel_layout=kernel_layouts[layout],
                                   name=name)


def deconv2d_bn_relu(data, prefix, **kwargs):
    """``deconv2d``, batch norm (no scale) and ReLU."""
    net = deconv2d(data, name=f"{prefix}_deconv", **kwargs)
    axis = kwargs.get("layout", "NCHW").index("C")
    net = layers.batch_norm_infer(net, epsilon=1e-5 + 1e-12, scale=False, axis=axis, name=f"{prefix}_batch_norm")
    return _op.nn.relu(net)


def get_net(batch_size, random_len=100, oshape=(3, 64, 64), ngf=128, code=None, layout="NCHW",
            dtype="float32") -> Function:
    """The generator as a Relay function of ``data`` (the code, ``(batch_size, random_len)``) and every weight."""
    if tuple(oshape[-2:]) != (64, 64):
        raise KilnError(f"dcgan: only 64x64 images are supported, got {tuple(oshape)}")
    if layout not in ("NCHW", "NHWC"):
        raise KilnError(f"dcgan: invalid layout {layout!r} (NCHW or NHWC)")
    code = var("data", dtype=dtype, shape=(batch_size, random_len)) if code is None else code
    width = layers.type_of(code).shape[-1]
    units = 4 * 4 * ngf * 8
    dense = _op.nn.relu(_op.nn.dense(code, var("dense_weight", shape=(units, width), dtype=dtype), units=units))
    body = _op.reshape(dense, newshape=(-1, ngf * 8, 4, 4) if layout == "NCHW" else (-1, 4, 4, ngf * 8))
    channels = ngf * 8
    for prefix, size in (("g2", 8), ("g3", 16), ("g4", 32)):
        body = deconv2d_bn_relu(body, prefix, ishape=(channels, size // 2, size // 2),
                                oshape=(channels // 2, size, size), kshape=(4, 4), layout=layout)
        channels //= 2
    body = deconv2d(body, ishape=(channels, 32, 32), oshape=tuple(oshape[-3:]), kshape=(4, 4), layout=layout,
                    name="g5_deconv")
    out = _op.tanh(body)
    return Function(free_vars(out), out)


def get_workload(batch_size, oshape=(3, 64, 64), ngf=128, random_len=100, layout="NCHW", dtype="float32"):
    """The DCGAN generator and its parameters (TVM's ``dcgan.get_workload``)."""
    return create_workload(get_net(batch_size, random_len, oshape=oshape, ngf=ngf, layout=layout, dtype=dtype))
