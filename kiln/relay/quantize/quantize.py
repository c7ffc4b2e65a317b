"""The quantization flow (TVM's ``relay.quantize.quantize``): partition, annotate, calibrate, realize.

``quantize(mod, params, dataset)`` first binds ``params`` and simplifies (``SimplifyInference``, ``FoldConstant``,
``FoldScaleAxis``, ``CanonicalizeOps``), then runs the four steps under ``current_qconfig()``: with
``do_simulation`` the result computes in float with simulated rounding; otherwise it computes in integers.
"""

from ...ir.transform import PassContext, Sequential, module_pass
from .. import transform as _transform
from ..optimize import bind_params_by_name
from ._annotate import QuantizeAnnotate
from ._calibrate import calibrate
from ._partition import QuantizePartition
from ._partition_conversions import partition_conversions
from ._realize import QuantizeRealize
from .config import current_qconfig, quantize_context

__all__ = ["partition", "annotate", "realize", "prerequisite_optimize", "quantize"]


def partition():
    """The partition pass (TVM's ``relay.quantize.partition``)."""
    return QuantizePartition


def annotate():
    """The annotation pass (TVM's ``relay.quantize.annotate``)."""
    return QuantizeAnnotate


def realize():
    """The realization pass (TVM's ``relay.quantize.realize``)."""
    return QuantizeRealize


def prerequisite_optimize(mod, params=None):
    """Bind ``params`` into ``@main`` and simplify before quantizing (TVM's ``prerequisite_optimize``)."""
    if params:
        mod = mod.shallow_copy()
        mod["main"] = bind_params_by_name(mod["main"], params)
    optimize = Sequential([_transform.SimplifyInference(), _transform.FoldConstant(), _transform.FoldScaleAxis(),
                           _transform.CanonicalizeOps(), _transform.FoldConstant()])
    return optimize(mod)


def quantize(mod, params=None, dataset=None):
    """``mod`` quantized as ``current_qconfig()`` says (TVM's ``relay.quantize.quantize``).

    Parameters
    ----------
    mod : IRModule
        The float model.
    params : dict of str to array, optional
        Weights to bind before quantizing (weights are quantized only as constants).
    dataset : list of dict, optional
        Calibration inputs by name, for the ``kl_divergence`` and ``percentile`` calibration modes.

    Returns
    -------
    IRModule
        With ``partition_conversions`` other than ``"disabled"``, partitioned into input quantization, the integer
        core and output dequantization (:mod:`._partition_conversions`).
    """
    mod = prerequisite_optimize(mod, params)
    calibrate_pass = module_pass(calibrate(dataset), opt_level=1, name="QuantizeCalibrate")
    passes = [partition(), annotate(), calibrate_pass, _transform.InferType()]
    if not current_qconfig().do_simulation:
        passes.append(realize())
    passes.append(_transform.FoldConstant())
    with PassContext(opt_level=3, required_pass=["QuantizeAnnotate", "QuantizeCalibrate", "QuantizeRealize"]):
        with quantize_context():
            mod = Sequential(passes)(mod)
    cfg = current_qconfig()
    if cfg.partition_conversions != "disabled":
        dtypes = {cfg.dtype_input, cfg.dtype_weight, cfg.dtype_activation}
        return partition_conversions(mod, dtypes, cfg.partition_conversions == "fully_integral")
    return mod
