"""Mobile classifiers with torchvision's layer shapes: MobileNetV2 (1.0), MobileNetV3-Large and -Small, EfficientNet-B0.

All are inverted-residual networks: a 1x1 expansion convolution, a depthwise 3x3 or 5x5 convolution (stride 1 or 2),
optionally a squeeze-and-excitation gate, and a linear 1x1 projection, with a residual connection where the shape is
kept. They differ in their activations (ReLU6; ReLU and hardswish with a HardSigmoid gate; SiLU with a Sigmoid gate)
and their stage tables, copied from torchvision (``mobilenetv2.py``, ``mobilenetv3.py``, ``efficientnet.py``). Batch
norms are folded into the convolutions, as exported for inference. ``image`` is the input's height and width; the
reduced test models use a small image with every layer kept.
"""

from .builder import OnnxBuilder

#: MobileNetV2: (expansion, output channels, blocks, first block's stride) per stage.
MOBILENET_V2_STAGES = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                       (6, 320, 1, 1))

#: MobileNetV3: (kernel, expanded channels, output channels, squeeze-excite, activation, stride) per block.
MOBILENET_V3_LARGE_BLOCKS = (
    (3, 16, 16, False, "relu", 1), (3, 64, 24, False, "relu", 2), (3, 72, 24, False, "relu", 1),
    (5, 72, 40, True, "relu", 2), (5, 120, 40, True, "relu", 1), (5, 120, 40, True, "relu", 1),
    (3, 240, 80, False, "hardswish", 2), (3, 200, 80, False, "hardswish", 1), (3, 184, 80, False, "hardswish", 1),
    (3, 184, 80, False, "hardswish", 1), (3, 480, 112, True, "hardswish", 1), (3, 672, 112, True, "hardswish", 1),
    (5, 672, 160, True, "hardswish", 2), (5, 960, 160, True, "hardswish", 1), (5, 960, 160, True, "hardswish", 1))
MOBILENET_V3_SMALL_BLOCKS = (
    (3, 16, 16, True, "relu", 2), (3, 72, 24, False, "relu", 2), (3, 88, 24, False, "relu", 1),
    (5, 96, 40, True, "hardswish", 2), (5, 240, 40, True, "hardswish", 1), (5, 240, 40, True, "hardswish", 1),
    (5, 120, 48, True, "hardswish", 1), (5, 144, 48, True, "hardswish", 1), (5, 288, 96, True, "hardswish", 2),
    (5, 576, 96, True, "hardswish", 1), (5, 576, 96, True, "hardswish", 1))

#: EfficientNet-B0: (expansion, kernel, first block's stride, output channels, blocks) per stage.
EFFICIENTNET_B0_STAGES = ((1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3), (6, 5, 1, 112, 3),
                          (6, 5, 2, 192, 4), (6, 3, 1, 320, 1))


def make_divisible(value, divisor=8):
    """torchvision's ``_make_divisible``: round ``value`` to a multiple of ``divisor`` losing at most 10%."""
    rounded = max(divisor, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


def _inverted_residual(b, x, cin, expanded, cout, kernel, stride, act, squeeze=None):
    """One inverted-residual block; ``squeeze`` is ``(squeezed channels, inner activation, gate activation)``."""
    y = b.conv(x, cin, expanded, 1, act=act) if expanded != cin else x
    y = b.conv(y, expanded, expanded, kernel, stride, groups=expanded, act=act)
    if squeeze is not None:
        y = b.squeeze_excite(y, expanded, *squeeze)
    y = b.conv(y, expanded, cout, 1)
    return b.node("Add", [y, x]) if stride == 1 and cin == cout else y


def _image_input(image):
    return [("input", "float32", (1, 3, image, image))]


def mobilenet_v2(image=224, num_classes=1000):
    """MobileNetV2 1.0 (torchvision's ``mobilenet_v2``): ReLU6, 17 inverted-residual blocks, 1280-channel head.

    Parameters
    ----------
    image : int, optional
        Input height and width (224 for the published model).
    num_classes : int, optional
        Classifier outputs.

    Returns
    -------
    onnx.ModelProto
        Input ``input`` of shape ``(1, 3, image, image)``, output the ``(1, num_classes)`` logits.
    """
    b = OnnxBuilder(seed=1)
    x = b.conv("input", 3, 32, 3, 2, act="relu6")
    cin = 32
    for expansion, cout, blocks, first_stride in MOBILENET_V2_STAGES:
        for block in range(blocks):
            x = _inverted_residual(b, x, cin, cin * expansion, cout, 3, first_stride if block == 0 else 1, "relu6")
            cin = cout
    x = b.conv(x, cin, 1280, 1, act="relu6")
    logits = b.classifier(x, 1280, num_classes)
    return b.model("mobilenet_v2", _image_input(image), [(logits, (1, num_classes))])


def mobilenet_v3(variant="large", image=224, num_classes=1000):
    """MobileNetV3 (torchvision's ``mobilenet_v3_large``/``_small``): hardswish, squeeze-excite gates with
    HardSigmoid, 5x5 depthwise convolutions, and a two-layer classifier (960 -> 1280 or 576 -> 1024 -> classes).

    Parameters
    ----------
    variant : {"large", "small"}, optional
        Which of the two published networks.
    image : int, optional
        Input height and width (224 for the published models).
    num_classes : int, optional
        Classifier outputs.

    Returns
    -------
    onnx.ModelProto
        Input ``input`` of shape ``(1, 3, image, image)``, output the ``(1, num_classes)`` logits.
    """
    blocks, last_conv, hidden = {"large": (MOBILENET_V3_LARGE_BLOCKS, 960, 1280),
                                 "small": (MOBILENET_V3_SMALL_BLOCKS, 576, 1024)}[variant]
    b = OnnxBuilder(seed=2)
    x = b.conv("input", 3, 16, 3, 2, act="hardswish")
    cin = 16
    for kernel, expanded, cout, use_se, act, stride in blocks:
        squeeze = (make_divisible(expanded // 4), "relu", "hardsigmoid") if use_se else None
        x = _inverted_residual(b, x, cin, expanded, cout, kernel, stride, act, squeeze)
        cin = cout
    x = b.conv(x, cin, last_conv, 1, act="hardswish")
    x = b.node("Flatten", [b.node("GlobalAveragePool", [x])], axis=1)
    x = b.activation(b.gemm(x, last_conv, hidden), "hardswish")
    logits = b.gemm(x, hidden, num_classes)
    return b.model(f"mobilenet_v3_{variant}", _image_input(image), [(logits, (1, num_classes))])


def efficientnet_b0(image=224, num_classes=1000):
    """EfficientNet-B0 (torchvision's ``efficientnet_b0``): SiLU (``x * Sigmoid(x)``), 16 MBConv blocks with
    squeeze-excite gates (squeezed to a quarter of the block's input channels, Sigmoid), 1280-channel head.

    Parameters
    ----------
    image : int, optional
        Input height and width (224 for the published model).
    num_classes : int, optional
        Classifier outputs.

    Returns
    -------
    onnx.ModelProto
        Input ``input`` of shape ``(1, 3, image, image)``, output the ``(1, num_classes)`` logits.
    """
    b = OnnxBuilder(seed=3)
    x = b.conv("input", 3, 32, 3, 2, act="silu")
    cin = 32
    for expansion, kernel, first_stride, cout, blocks in EFFICIENTNET_B0_STAGES:
        for block in range(blocks):
            squeeze = (max(1, cin // 4), "silu", "sigmoid")
            x = _inverted_residual(b, x, cin, cin * expansion, cout, kernel, first_stride if block == 0 else 1,
                                   "silu", squeeze)
            cin = cout
    x = b.conv(x, cin, 1280, 1, act="silu")
    logits = b.classifier(x, 1280, num_classes)
    return b.model("efficientnet_b0", _image_input(image), [(logits, (1, num_classes))])
