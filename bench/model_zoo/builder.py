"""``OnnxBuilder``: a small helper that grows one ONNX graph with fresh names, seeded random weights and the layers the
zoo's networks share (convolutions with their batch norm folded in, activations, dense layers, layer norms).

Weights are drawn from one seeded generator with He scaling (``sqrt(2 / fan_in)``), so activations keep a steady
magnitude through deep networks and outputs stay finite and comparable between runtimes. Convolutions carry a bias
and no BatchNormalization, as exporters emit them in inference mode (the batch norm folded into the weights); the
ResNet-50 of ``bench_resnet.py`` keeps explicit batch norms with :meth:`OnnxBuilder.conv_bn`.
"""

import numpy as np
from onnx import helper, numpy_helper

#: The opset the zoo exports at: ``LayerNormalization`` needs 17, ``HardSwish`` 14; ONNX Runtime and kiln read it.
OPSET = 17
#: The IR version that goes with opsets 15-17 (what exporters of that time wrote).
IR_VERSION = 8


class OnnxBuilder:
    """Accumulates the nodes and initializers of an ONNX graph, naming every value ``<prefix>_<counter>``.

    Parameters
    ----------
    seed : int, optional
        Seed of the generator of every random weight, so a model is the same bytes on every run.
    """

    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits = [], []
        self.count = 0
        self._scalars = {}

    def name(self, prefix):
        """A fresh value name starting with ``prefix``."""
        self.count += 1
        return f"{prefix}_{self.count}"

    def constant(self, value, prefix="const", dtype="float32"):
        """Add ``value`` (a scalar or array) as an initializer of element type ``dtype``; returns its name."""
        name = self.name(prefix)
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def scalar(self, value, dtype="float32"):
        """A scalar initializer holding ``value``, shared by every node that uses the same value."""
        key = (float(value), dtype)
        if key not in self._scalars:
            self._scalars[key] = self.constant(value, "scalar", dtype)
        return self._scalars[key]

    def weight(self, prefix, shape, scale):
        """Add a float32 initializer of ``shape`` drawn from a normal distribution of deviation ``scale``."""
        return self.constant(self.rng.standard_normal(shape) * scale, prefix)

    def node(self, op, inputs, outputs=1, **attrs):
        """Append an ``op`` node; returns its output name, or a list of ``outputs`` names when it has several."""
        names = [self.name(op.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, names, **attrs))
        return names[0] if outputs == 1 else names

    # -- activations, as PyTorch exports them at opset 17 ----------------------------------------------------------

    def activation(self, x, kind):
        """Apply the activation ``kind`` to ``x``.

        ``relu``, ``sigmoid``, ``tanh``, ``hardswish`` and ``hardsigmoid`` (PyTorch's: ``relu6(x + 3) / 6``) are
        single ONNX operators; ``relu6`` is a ``Clip`` to [0, 6]; ``silu`` (Swish) is ``x * Sigmoid(x)`` and ``gelu``
        the exact form ``x * 0.5 * (1 + Erf(x / sqrt(2)))``, the decompositions exporters write for them; ``None``
        returns ``x`` unchanged.
        """
        if kind is None:
            return x
        if kind == "relu6":
            return self.node("Clip", [x, self.scalar(0.0), self.scalar(6.0)])
        if kind == "hardsigmoid":
            return self.node("HardSigmoid", [x], alpha=1.0 / 6.0, beta=0.5)
        if kind == "silu":
            return self.node("Mul", [x, self.node("Sigmoid", [x])])
        if kind == "gelu":
            erf = self.node("Erf", [self.node("Div", [x, self.scalar(np.sqrt(2.0))])])
            half = self.node("Mul", [x, self.scalar(0.5)])
            return self.node("Mul", [half, self.node("Add", [erf, self.scalar(1.0)])])
        simple = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "hardswish": "HardSwish"}
        return self.node(simple[kind], [x])

    # -- layers -----------------------------------------------------------------------------------------------------

    def conv(self, x, cin, cout, kernel, stride=1, groups=1, act=None, pad=None, bias=True):
        """A square convolution with bias (a batch norm folded in), then ``act``.

        Parameters
        ----------
        x : str
            The NCHW input.
        cin, cout : int
            Input and output channels.
        kernel, stride : int
            Kernel size and stride, on both axes.
        groups : int, optional
            Channel groups (``groups == cin == cout``: a depthwise convolution).
        act : str, optional
            An activation of :meth:`activation`.
        pad : int, optional
            Padding on every side; ``kernel // 2`` by default ("same" at stride 1).
        bias : bool, optional
            Whether the convolution has a bias input.

        Returns
        -------
        str
            The output's name.
        """
        fan_in = cin // groups * kernel * kernel
        inputs = [x, self.weight("w", (cout, cin // groups, kernel, kernel), (2.0 / fan_in) ** 0.5)]
        if bias:
            inputs.append(self.weight("b", (cout,), 0.1))
        pad = kernel // 2 if pad is None else pad
        y = self.node("Conv", inputs, kernel_shape=[kernel, kernel], strides=[stride, stride], pads=[pad] * 4,
                      group=groups)
        return self.activation(y, act)

    def conv_bn(self, x, cin, cout, kernel, stride, relu=True):
        """A convolution without bias, an explicit BatchNormalization with random statistics, then a ReLU."""
        y = self.conv(x, cin, cout, kernel, stride, bias=False)
        stats = [self.rng.uniform(0.5, 1.0, cout), self.rng.standard_normal(cout) * 0.1,
                 self.rng.standard_normal(cout) * 0.1, self.rng.uniform(0.5, 1.5, cout)]
        names = [self.constant(v, p) for p, v in zip(("gamma", "beta", "mean", "var"), stats, strict=True)]
        y = self.node("BatchNormalization", [y, *names], epsilon=1e-5)
        return self.node("Relu", [y]) if relu else y

    def squeeze_excite(self, x, channels, squeezed, inner_act, gate_act):
        """Squeeze-and-excitation: global average pool, 1x1 convolutions ``channels -> squeezed -> channels`` with
        ``inner_act`` and ``gate_act`` between them, and the gate multiplied into ``x`` per channel."""
        s = self.node("GlobalAveragePool", [x])
        s = self.conv(s, channels, squeezed, 1, act=inner_act)
        s = self.conv(s, squeezed, channels, 1, act=gate_act)
        return self.node("Mul", [x, s])

    def classifier(self, x, cin, num_classes):
        """Global average pool, flatten and a fully connected layer (``Gemm``): the head of the CNN classifiers."""
        x = self.node("Flatten", [self.node("GlobalAveragePool", [x])], axis=1)
        return self.gemm(x, cin, num_classes)

    def gemm(self, x, cin, cout):
        """A fully connected layer on a ``(batch, cin)`` matrix as ``Gemm`` with the weight transposed (``transB``)."""
        w, b = self.weight("fc_w", (cout, cin), cin ** -0.5), self.weight("fc_b", (cout,), 0.01)
        return self.node("Gemm", [x, w, b], transB=1)

    def dense(self, x, cin, cout, scale=0.02):
        """A linear layer on the last axis of ``x`` as ``MatMul`` then ``Add`` (how PyTorch exports ``nn.Linear`` on a
        tensor of rank 3); ``scale`` is the weights' deviation (0.02: BERT's and ViT's initialisation)."""
        y = self.node("MatMul", [x, self.weight("dense_w", (cin, cout), scale)])
        return self.node("Add", [y, self.weight("dense_b", (cout,), 0.02)])

    def layer_norm(self, x, width, epsilon):
        """``LayerNormalization`` over the last axis of size ``width``, with a scale near 1 and a small shift."""
        scale = self.constant(1.0 + self.rng.standard_normal(width) * 0.02, "ln_scale")
        shift = self.weight("ln_bias", (width,), 0.02)
        return self.node("LayerNormalization", [x, scale, shift], axis=-1, epsilon=epsilon)

    def model(self, name, inputs, outputs, opset=OPSET):
        """The finished ``ModelProto``.

        Parameters
        ----------
        name : str
            The graph's name.
        inputs : list of (str, numpy dtype, tuple of int)
            The graph inputs: name, element type and shape.
        outputs : list of (str, tuple of int)
            The float32 graph outputs: value name and shape.
        opset : int, optional
            The default domain's opset the model imports.
        """
        def info(value, dtype, shape):
            return helper.make_tensor_value_info(value, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), shape)

        graph = helper.make_graph(self.nodes, name, [info(*i) for i in inputs],
                                  [info(value, "float32", shape) for value, shape in outputs],
                                  self.inits)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=IR_VERSION,
                                 producer_name="kiln bench/model_zoo")
