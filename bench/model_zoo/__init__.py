"""Modern architectures built with ``onnx.helper`` for the benchmarks: real layer shapes, batch 1, float32, seeded
random weights, opset 17 (read by ONNX Runtime and kiln).

:data:`MODERN` lists them in benchmark order; each :class:`ZooModel` builds its published size, or with
``reduced=True`` a small variant (a small image, fewer or narrower layers) that keeps every kind of layer, for tests.

========================  ====================================================  ==============================
name                      network                                               module
========================  ====================================================  ==============================
``mobilenet_v2``          MobileNetV2 1.0, 224x224                              :mod:`.mobile`
``mobilenet_v3_large``    MobileNetV3-Large, 224x224                            :mod:`.mobile`
``mobilenet_v3_small``    MobileNetV3-Small, 224x224                            :mod:`.mobile`
``efficientnet_b0``       EfficientNet-B0, 224x224                              :mod:`.mobile`
``yolov5s``               YOLOv5s detector, 640x640, decoded boxes (no NMS)     :mod:`.yolo`
``crnn``                  CRNN text recognizer, 32x100, two BiLSTMs             :mod:`.crnn`
``bert_base``             BERT-base encoder, sequence 128                       :mod:`.transformer`
``vit_b16``               ViT-B/16, 224x224                                     :mod:`.transformer`
========================  ====================================================  ==============================
"""

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

from .builder import OnnxBuilder
from .crnn import crnn
from .mobile import efficientnet_b0, mobilenet_v2, mobilenet_v3
from .transformer import bert_base, bert_inputs, vit_b16
from .yolo import yolov5s


def random_inputs(model, rng):
    """Standard-normal float32 arrays for every graph input of ``model`` that is not an initializer.

    Parameters
    ----------
    model : onnx.ModelProto
        The model; symbolic dimensions are taken as 1.
    rng : numpy.random.Generator
        The random source.

    Returns
    -------
    dict of str to numpy.ndarray
    """
    initializers = {i.name for i in model.graph.initializer}
    feeds = {}
    for value in model.graph.input:
        if value.name not in initializers:
            dims = [d.dim_value if d.dim_value > 0 else 1 for d in value.type.tensor_type.shape.dim]
            feeds[value.name] = rng.standard_normal(dims).astype("float32")
    return feeds


@dataclass(frozen=True)
class ZooModel:
    """One network of the zoo.

    Parameters
    ----------
    name : str
        The name the benchmarks print and select by.
    builder : callable
        Returns the ``onnx.ModelProto``; called with no arguments for the published size.
    reduced_args : dict
        Keyword arguments of ``builder`` for the small test variant.
    make_inputs : callable, optional
        ``(model, rng) -> feeds``; :func:`random_inputs` by default.
    """

    name: str
    builder: Callable
    reduced_args: dict = field(default_factory=dict)
    make_inputs: Callable = random_inputs

    def build(self, reduced=False):
        """The model as an ``onnx.ModelProto``: the published size, or the small variant when ``reduced``."""
        return self.builder(**self.reduced_args) if reduced else self.builder()


MODERN = (
    ZooModel("mobilenet_v2", mobilenet_v2, {"image": 32}),
    ZooModel("mobilenet_v3_large", functools.partial(mobilenet_v3, "large"), {"image": 32}),
    ZooModel("mobilenet_v3_small", functools.partial(mobilenet_v3, "small"), {"image": 32}),
    ZooModel("efficientnet_b0", efficientnet_b0, {"image": 32}),
    ZooModel("yolov5s", yolov5s, {"image": 64, "depth": (1, 1, 1, 1)}),
    ZooModel("crnn", crnn, {"width": 32, "hidden": 32}),
    ZooModel("bert_base", bert_base, {"seq": 16, "layers": 2, "hidden": 64, "heads": 4, "vocab": 1000}, bert_inputs),
    ZooModel("vit_b16", vit_b16, {"image": 32, "patch": 8, "layers": 2, "hidden": 64, "heads": 4}),
)

__all__ = ["MODERN", "OnnxBuilder", "ZooModel", "random_inputs"]
