"""kiln.target: compilation targets and the code generators (C source through the system C compiler, LLVM IR
through llvmlite). ``kiln.build`` is :func:`kiln.target.build.build`; importing this package registers the global
functions ``"target.build.c"``, ``"target.build.llvm"``, ``"target.link_library"`` and ``"target.Target"``."""

from . import build as _build  # noqa: F401  (registers the code generators)
from . import codegen  # noqa: F401  (TVM's tvm.target.codegen)
from .compilation_config import CompilationConfig, make_compilation_config
from .generic_func import generic_func
from .target import Target, TargetKind
from .virtual_device import VirtualDevice
