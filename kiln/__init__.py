"""kiln: a deep-learning compiler built on Apache TVM's Relay/TIR architecture (``import kiln as tvm``)."""

from . import error, ir, runtime
from . import tir, arith
from .tir import transform as _tir_transform  # noqa: F401,E402  (makes kiln.tir.transform available)
from . import te  # noqa: E402  (tvm.te)
from .te import lower  # noqa: E402  (tvm.lower)
from . import topi  # noqa: E402  (tvm.topi; registers FTVMCompute/FTVMSchedule/FTVMStrategy by op name)
from . import target  # noqa: E402  (tvm.target; registers the code generators)
from .target.build import build  # noqa: E402  (tvm.build)
from .ir import IRModule
from .runtime import Device, NDArray, cpu, device, get_global_func, ndarray as nd, register_func
from . import transform  # noqa: E402  (tvm.transform)
from .ir import instrument  # noqa: E402  (tvm.instrument)
from . import relay  # noqa: E402  (relay registers its hooks into the layers above on import)
from . import contrib  # noqa: E402  (tvm.contrib.graph_executor)

__version__ = "0.1.0"
