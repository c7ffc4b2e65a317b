"""kiln.relay.testing: ready-made workloads for tests and benchmarks (TVM's ``relay.testing``).

Examples
--------
>>> from kiln.relay.testing import resnet
>>> mod, params = resnet.get_workload(num_layers=18)   # doctest: +SKIP
"""

from ...target.enabled import enabled_targets  # noqa: F401  (TVM's relay.testing re-exports tvm.testing's)
from ..prelude import Prelude  # noqa: F401  (TVM's tests import it from here)
from . import (  # noqa: F401  (kiln.relay.testing.resnet.get_workload, ...)
    dcgan,
    densenet,
    dqn,
    inception_v3,
    layers,
    lstm,
    mlp,
    mobilenet,
    nat,
    resnet,
    squeezenet,
    synthetic,
    temp_op_attr,
    transformer,
    vgg,
)
from .grad import _np_randn_from_type, check_grad  # noqa: F401  (TVM's tests import the helper too)
from .init import create_workload
from .nat import count, make_nat_expr, make_nat_value
from .utils import assert_same_results, count_ops, evaluate, rand, random_inputs, run_infer_type, run_opt_pass
