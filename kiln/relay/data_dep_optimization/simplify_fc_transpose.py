"""Dense layers of transposed weights read the weights pre-transposed (TVM's
``relay.data_dep_optimization.simplify_fc_transpose``): ``nn.dense(x, transpose(w))`` becomes ``nn.dense(x, w.T)``
and ``params`` holds ``w.T`` instead of ``w``."""

import numpy as np

from ...runtime import ndarray as nd
from ..analysis.fc_transpose import search_fc_transpose
from ..transform.simplify_fc_transpose import SimplifyFCTranspose
from .utils import _run_opt_pass

__all__ = ["convert"]


def convert(func, params):
    """Store each transposed dense weight of ``func`` pre-transposed: ``params[w]`` becomes ``params[w + ".T"]``
    (changed in place, as TVM's is) and the function reads the new parameter.

    Returns
    -------
    (relay.Function, dict)
    """
    names = [n for n in dict.fromkeys(search_fc_transpose(func)) if n in params]
    for name in names:
        weight = params.pop(name)
        params[name + ".T"] = nd.array(np.ascontiguousarray(np.transpose(weight.numpy() if hasattr(
            weight, "numpy") else np.asarray(weight))))
    return _run_opt_pass(func, SimplifyFCTranspose(names)), params
