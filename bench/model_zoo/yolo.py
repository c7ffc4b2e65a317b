"""A YOLOv5s detector (Ultralytics' ``yolov5s.yaml``, v6: depth 0.33, width 0.50) as exported to ONNX, without NMS.

Backbone: a 6x6 stride-2 stem, stride-2 3x3 convolutions between C3 (CSP bottleneck) stages of 1, 2, 3 and 1 blocks,
and SPPF (three chained 5x5 max pools, concatenated). Neck: a PAN of 1x1 convolutions, nearest 2x ``Resize``
upsampling, ``Concat`` with the backbone's P3/P4 features and C3 stages without shortcuts, then stride-2 3x3
convolutions back down. Each of the three heads (strides 8, 16 and 32) is a 1x1 convolution to 3 anchors x 85 values,
reshaped and transposed to ``(1, 3, ny, nx, 85)``, passed through a Sigmoid and ``Split`` into xy, wh and scores,
decoded against the grid and anchors (``xy * 2 - 0.5 + grid``, ``(wh * 2) ** 2 * anchor``) and flattened; the three
are concatenated into ``(1, boxes, 85)``. Every convolution is Conv + SiLU (batch norms folded).
"""

import numpy as np

from .builder import OnnxBuilder

#: Anchor (width, height) pairs in pixels for the heads of strides 8, 16 and 32 (the COCO anchors of yolov5s).
ANCHORS = (((10, 13), (16, 30), (33, 23)), ((30, 61), (62, 45), (59, 119)), ((116, 90), (156, 198), (373, 326)))


def _c3(b, x, cin, cout, blocks, shortcut=True):
    """The C3 module: two 1x1 branches of half the width, ``blocks`` bottlenecks (1x1 then 3x3) on the first,
    concatenated and merged by a 1x1 convolution."""
    hidden = cout // 2
    y = b.conv(x, cin, hidden, 1, act="silu")
    for _ in range(blocks):
        z = b.conv(b.conv(y, hidden, hidden, 1, act="silu"), hidden, hidden, 3, act="silu")
        y = b.node("Add", [y, z]) if shortcut else z
    skip = b.conv(x, cin, hidden, 1, act="silu")
    return b.conv(b.node("Concat", [y, skip], axis=1), 2 * hidden, cout, 1, act="silu")


def _sppf(b, x, cin, cout):
    """SPPF: a 1x1 convolution to half width, three chained 5x5 stride-1 max pools, all four concatenated, 1x1."""
    hidden = cin // 2
    y = b.conv(x, cin, hidden, 1, act="silu")
    pooled = [y]
    for _ in range(3):
        pooled.append(b.node("MaxPool", [pooled[-1]], kernel_shape=[5, 5], strides=[1, 1], pads=[2, 2, 2, 2]))
    return b.conv(b.node("Concat", pooled, axis=1), 4 * hidden, cout, 1, act="silu")


def _upsample(b, x):
    """Nearest 2x upsampling as PyTorch exports ``nn.Upsample(scale_factor=2)`` (``Resize`` with scales)."""
    scales = b.constant([1.0, 1.0, 2.0, 2.0], "scales")
    return b.node("Resize", [x, "", scales], mode="nearest", coordinate_transformation_mode="asymmetric",
                  nearest_mode="floor")


def _detect(b, x, cin, size, stride, anchors, num_classes):
    """One detection head decoded to ``(1, 3 * size * size, 5 + num_classes)`` boxes in input pixels."""
    outputs = 5 + num_classes
    y = b.conv(x, cin, 3 * outputs, 1)
    y = b.node("Reshape", [y, b.constant([1, 3, outputs, size, size], "shape", "int64")])
    y = b.node("Sigmoid", [b.node("Transpose", [y], perm=[0, 1, 3, 4, 2])])
    xy, wh, scores = b.node("Split", [y, b.constant([2, 2, outputs - 4], "split", "int64")], outputs=3, axis=4)
    cols, rows = np.meshgrid(np.arange(size), np.arange(size))
    grid = (np.stack([cols, rows], -1)[None, None] - 0.5) * stride  # (1, 1, ny, nx, 2)
    xy = b.node("Add", [b.node("Mul", [xy, b.scalar(2.0 * stride)]), b.constant(grid, "grid")])
    anchor_grid = np.asarray(anchors, "float32").reshape(1, 3, 1, 1, 2)
    wh = b.node("Mul", [b.node("Pow", [b.node("Mul", [wh, b.scalar(2.0)]), b.scalar(2.0)]),
                        b.constant(anchor_grid, "anchor_grid")])
    y = b.node("Concat", [xy, wh, scores], axis=4)
    return b.node("Reshape", [y, b.constant([1, 3 * size * size, outputs], "shape", "int64")])


def yolov5s(image=640, num_classes=80, depth=(1, 2, 3, 1)):
    """YOLOv5s as exported by Ultralytics' ``export.py`` (see the module docstring).

    Parameters
    ----------
    image : int, optional
        Input height and width, a multiple of 32 (640 for the published model).
    num_classes : int, optional
        Object classes (80 for COCO).
    depth : tuple of 4 int, optional
        Bottlenecks in the backbone's four C3 stages (``(1, 2, 3, 1)`` for yolov5s); the neck's C3 keep one.

    Returns
    -------
    onnx.ModelProto
        Input ``images`` of shape ``(1, 3, image, image)``, output ``(1, 3 * 21 * (image / 32) ** 2, 5 +
        num_classes)``: per box x, y, w, h in pixels, objectness and class scores.
    """
    b = OnnxBuilder(seed=4)
    x = b.conv("images", 3, 32, 6, 2, act="silu", pad=2)
    backbone, cin = [], 32
    for width, blocks in zip((64, 128, 256, 512), depth, strict=True):
        x = _c3(b, b.conv(x, cin, width, 3, 2, act="silu"), width, width, blocks)
        backbone.append(x)
        cin = width
    p3, p4 = backbone[1], backbone[2]
    x = _sppf(b, x, 512, 512)
    head_p5 = b.conv(x, 512, 256, 1, act="silu")
    x = _c3(b, b.node("Concat", [_upsample(b, head_p5), p4], axis=1), 512, 256, 1, shortcut=False)
    head_p4 = b.conv(x, 256, 128, 1, act="silu")
    out_p3 = _c3(b, b.node("Concat", [_upsample(b, head_p4), p3], axis=1), 256, 128, 1, shortcut=False)
    x = b.node("Concat", [b.conv(out_p3, 128, 128, 3, 2, act="silu"), head_p4], axis=1)
    out_p4 = _c3(b, x, 256, 256, 1, shortcut=False)
    x = b.node("Concat", [b.conv(out_p4, 256, 256, 3, 2, act="silu"), head_p5], axis=1)
    out_p5 = _c3(b, x, 512, 512, 1, shortcut=False)
    heads = [_detect(b, feature, channels, image // stride, stride, anchors, num_classes)
             for feature, channels, stride, anchors in zip((out_p3, out_p4, out_p5), (128, 256, 512), (8, 16, 32),
                                                           ANCHORS, strict=True)]
    boxes = 3 * sum((image // stride) ** 2 for stride in (8, 16, 32))
    detections = b.node("Concat", heads, axis=1)
    return b.model("yolov5s", [("images", "float32", (1, 3, image, image))],
                   [(detections, (1, boxes, 5 + num_classes))])
