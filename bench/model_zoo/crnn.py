"""A CRNN text-line recognizer (Shi, Bai and Yao 2015, as in the widely used ``crnn.pytorch``), exported to ONNX.

A VGG-style CNN turns a grayscale 32-pixel-high line into one feature column per 4 input pixels of width: seven 3x3
convolutions (64, 128, 256, 256, 512, 512 channels, then a 2x2 one with 512), ReLU, max pools of 2x2 and then of 2x1
(which halve only the height, padded by one column). The height-1 feature map is squeezed and transposed to a
sequence ``(T, 1, 512)``; two bidirectional ``LSTM`` layers of 256 hidden units each, as ONNX ``LSTM`` nodes, read it,
each followed by a linear layer (``MatMul`` + ``Add``) on the concatenated directions; the last one emits per-step
logits over the alphabet (36 characters and the CTC blank).
"""

from .builder import OnnxBuilder


def _bidirectional_lstm(b, x, steps, cin, hidden, cout):
    """A bidirectional LSTM over ``(steps, 1, cin)`` and a linear layer on its ``2 * hidden`` outputs: PyTorch's
    ``BidirectionalLSTM`` module as exported (``Y`` is ``(steps, 2, 1, hidden)``, transposed and reshaped)."""
    scale = (3 * hidden) ** -0.5  # the deviation of PyTorch's uniform(-1/sqrt(hidden), 1/sqrt(hidden)) initialisation
    w = b.weight("lstm_w", (2, 4 * hidden, cin), scale)
    r = b.weight("lstm_r", (2, 4 * hidden, hidden), scale)
    bias = b.weight("lstm_b", (2, 8 * hidden), scale)
    y, _, _ = b.node("LSTM", [x, w, r, bias], outputs=3, direction="bidirectional", hidden_size=hidden)
    y = b.node("Transpose", [y], perm=[0, 2, 1, 3])
    y = b.node("Reshape", [y, b.constant([steps, 1, 2 * hidden], "shape", "int64")])
    return b.dense(y, 2 * hidden, cout, scale=(2 * hidden) ** -0.5)


def crnn(width=100, hidden=256, num_classes=37):
    """The CRNN recognizer of the module docstring.

    Parameters
    ----------
    width : int, optional
        Input width in pixels, at least 16 (100 in the paper; the height is fixed at 32). The sequence has
        ``width // 4 + 1`` steps (26 for 100).
    hidden : int, optional
        LSTM hidden units per direction (256 in the paper).
    num_classes : int, optional
        Alphabet size including the CTC blank.

    Returns
    -------
    onnx.ModelProto
        Input ``image`` of shape ``(1, 1, 32, width)``, output ``(steps, 1, num_classes)`` logits.
    """
    b = OnnxBuilder(seed=5)

    def pool(x, tall=False):
        if tall:  # halve the height only; one column of padding on each side
            return b.node("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 1], pads=[0, 1, 0, 1])
        return b.node("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])

    x = pool(b.conv("image", 1, 64, 3, act="relu"))
    x = pool(b.conv(x, 64, 128, 3, act="relu"))
    x = b.conv(b.conv(x, 128, 256, 3, act="relu"), 256, 256, 3, act="relu")
    x = pool(x, tall=True)
    x = b.conv(b.conv(x, 256, 512, 3, act="relu"), 512, 512, 3, act="relu")
    x = pool(x, tall=True)
    x = b.conv(x, 512, 512, 2, act="relu", pad=0)  # height 1, width // 4 + 1 columns
    steps = width // 4 + 1
    x = b.node("Transpose", [b.node("Squeeze", [x, b.constant([2], "axes", "int64")])], perm=[2, 0, 1])
    x = _bidirectional_lstm(b, x, steps, 512, hidden, hidden)
    logits = _bidirectional_lstm(b, x, steps, hidden, hidden, num_classes)
    return b.model("crnn", [("image", "float32", (1, 1, 32, width))], [(logits, (steps, 1, num_classes))])
