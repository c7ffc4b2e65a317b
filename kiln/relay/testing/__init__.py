"""kiln.relay.testing: ready-made workloads for tests and benchmarks (TVM's ``relay.testing``).

Examples
--------
>>> from kiln.relay.testing import resnet
>>> mod, params = resnet.get_workload(num_layers=18)   # doctest: +SKIP
"""

from . import mlp, resnet, temp_op_attr, transformer  # noqa: F401  (kiln.relay.testing.resnet.get_workload, ...)
from .init import create_workload
from .utils import assert_same_results, evaluate, random_inputs, run_infer_type, run_opt_pass
