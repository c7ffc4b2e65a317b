"""``kiln.transform``: TVM's ``tvm.transform`` alias of :mod:`kiln.ir.transform` (the pass infrastructure)."""

from kiln.ir.transform import *  # noqa: F401,F403
from kiln.ir.transform import __all__  # noqa: F401
