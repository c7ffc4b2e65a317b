"""Quantization configuration and context (TVM's ``QConfig``, ``qconfig``, ``current_qconfig``, ``QuantizeContext``).

``with qconfig(global_scale=8.0, skip_conv_layers=[0]):`` makes a configuration current for the calling thread;
every pass of the quantization flow reads :func:`current_qconfig`. The :class:`QuantizeContext` holds the state of
one annotation run: the simulated-quantize node already attached to an expression (so it is attached once), the
count of convolutions seen (to skip the ones ``skip_conv_layers`` names) and whether quantization has stopped
(after a global average pooling).
"""

import dataclasses
import threading
import warnings
from enum import IntEnum

from ...error import KilnError

__all__ = ["QAnnotateKind", "kind2str", "QConfig", "qconfig", "current_qconfig", "QuantizeContext",
           "quantize_context"]


class QAnnotateKind(IntEnum):
    """What a simulated-quantize node quantizes, which decides its bit width and dtype (TVM's values)."""

    IDENTITY = 0
    INPUT = 1
    WEIGHT = 2
    ACTIVATION = 3


def kind2str(kind) -> str:
    """``"identity"``, ``"input"``, ``"weight"`` or ``"activation"``."""
    try:
        return QAnnotateKind(int(kind)).name.lower()
    except ValueError:
        raise KilnError(f"unknown QAnnotateKind {kind!r} (0 to 3)") from None


@dataclasses.dataclass(frozen=True)
class QConfig:
    """A quantization configuration (build it with :func:`qconfig`; the fields are TVM's, with its defaults).

    ``calibrate_mode`` is ``"global_scale"`` (every activation scaled to ``global_scale``), ``"kl_divergence"`` or
    ``"percentile"`` (scales from a dataset); ``weight_scale`` is ``"power2"`` (the absolute maximum rounded up to a
    power of two) or ``"max"``. ``do_simulation`` stops after calibration (float computations simulating the
    integer ones); otherwise realization rewrites them into integer arithmetic.
    """

    nbit_input: int = 8
    nbit_weight: int = 8
    nbit_activation: int = 32
    dtype_input: str = "int8"
    dtype_weight: str = "int8"
    dtype_activation: str = "int32"
    calibrate_mode: str = "global_scale"
    global_scale: float = 8.0
    weight_scale: str = "power2"
    skip_dense_layer: bool = True
    skip_conv_layers: tuple | None = (0,)
    do_simulation: bool = False
    round_for_shift: bool = True
    debug_enabled_ops: tuple | None = None
    rounding: str = "UPWARD"
    calibrate_chunk_by: int = -1
    partition_conversions: str = "disabled"

    def __post_init__(self):
        for name in ("skip_conv_layers", "debug_enabled_ops"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, tuple(value))
        choices = {"calibrate_mode": ("global_scale", "kl_divergence", "percentile"),
                   "weight_scale": ("power2", "max"), "rounding": ("UPWARD", "TONEAREST"),
                   "partition_conversions": ("disabled", "enabled", "fully_integral")}
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise KilnError(f"qconfig: {name} must be one of {', '.join(allowed)}, got {getattr(self, name)!r}")

    def guard(self, ref_call) -> bool:
        """Whether the operator of ``ref_call`` may be quantized (``debug_enabled_ops`` restricts them)."""
        return self.debug_enabled_ops is None or ref_call.op.name in self.debug_enabled_ops

    def get_nbit_by_kind(self, kind) -> int:
        return getattr(self, "nbit_" + kind2str(kind))

    def get_dtype_by_kind(self, kind) -> str:
        return getattr(self, "dtype_" + kind2str(kind))

    def __enter__(self):
        _STACK.configs = [*_configs(), self]
        return self

    def __exit__(self, *exc):
        _STACK.configs = _configs()[:-1]

    def __str__(self):
        fields = ", ".join(f"{f.name}={getattr(self, f.name)}" for f in dataclasses.fields(self))
        return f"qconfig({fields})"


_STACK = threading.local()


def _configs() -> list:
    return getattr(_STACK, "configs", [])


def qconfig(**kwargs) -> QConfig:
    """A :class:`QConfig` with the given fields changed from TVM's defaults.

    An unknown option is ignored, as TVM ignores it (its own tests pass ``skip_dense_layers`` for
    ``skip_dense_layer``), but with a warning naming it and the known ones, so a typo does not go unnoticed.

    Examples
    --------
    >>> with qconfig(global_scale=4.0, skip_conv_layers=[]):   # doctest: +SKIP
    ...     qmod = relay.quantize.quantize(mod, params)
    """
    known = {f.name for f in dataclasses.fields(QConfig)}
    unknown = sorted(set(kwargs) - known)
    if unknown:
        warnings.warn(f"qconfig: unknown option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} ignored; "
                      f"options: {', '.join(sorted(known))}", stacklevel=2)
    return QConfig(**{k: v for k, v in kwargs.items() if k in known})


def current_qconfig() -> QConfig:
    """The innermost configuration entered with ``with``, else the defaults."""
    configs = _configs()
    return configs[-1] if configs else QConfig()


class QuantizeContext:
    """The state of one annotation run (see the module docstring); ``with quantize_context():`` resets it."""

    Current = None

    def __init__(self):
        self.qnode_map: dict = {}
        self._conv2d_counter = 0
        self._stop_quantize = False

    def check_to_skip(self, ref_call) -> bool:
        """Whether ``ref_call`` stays unquantized: after :meth:`stop_quantize`, or a convolution whose index is in
        ``skip_conv_layers`` (convolutions are counted as they are met)."""
        if self._stop_quantize:
            return True
        skipped = current_qconfig().skip_conv_layers
        if ref_call.op.name == "nn.conv2d":
            index = self._conv2d_counter
            self._conv2d_counter += 1
            return skipped is not None and index in skipped
        return False

    def stop_quantize(self):
        """Leave every operator after this point unquantized."""
        self._stop_quantize = True

    def reset(self):
        self._conv2d_counter = 0
        self._stop_quantize = False
        self.qnode_map = {}

    def __enter__(self):
        self.reset()
        return self

    def __exit__(self, *exc):
        pass


def quantize_context() -> QuantizeContext:
    """The process-wide quantization context (TVM's singleton)."""
    if QuantizeContext.Current is None:
        QuantizeContext.Current = QuantizeContext()
    return QuantizeContext.Current
