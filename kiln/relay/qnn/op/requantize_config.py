"""``relay.qnn.requantize_config``: the rounding a requantization uses when its call says ``rounding="None"`` (TVM's
``RequantizeConfig``), entered with ``with``.

``rounding`` is ``"UPWARD"`` (the default: halves up) or ``"TONEAREST"`` (halves away from zero). It is read when
the requantization is computed (canonicalized for a build, or evaluated), so a call built outside the ``with`` and
compiled inside it rounds as the configuration says, as in TVM. ``compute_dtype`` is accepted for TVM's scripts;
kiln always scales in float64, exact wherever TVM's fixed-point arithmetic is.
"""

import dataclasses
import threading

from ....error import KilnError

__all__ = ["RequantizeConfig", "requantize_config", "current_requantize_config", "resolve_rounding"]

_ROUNDINGS = ("UPWARD", "TONEAREST")
_STACK = threading.local()


@dataclasses.dataclass(frozen=True)
class RequantizeConfig:
    """The requantization defaults; use :func:`requantize_config` to make one."""

    rounding: str = "UPWARD"
    compute_dtype: str = "int64"

    def __post_init__(self):
        if self.rounding not in _ROUNDINGS:
            raise KilnError(f"requantize_config: rounding must be one of {', '.join(_ROUNDINGS)}, "
                            f"got {self.rounding!r}")
        if self.compute_dtype not in ("int64", "float32", "float64"):
            raise KilnError(f"requantize_config: compute_dtype must be int64, float32 or float64, got "
                            f"{self.compute_dtype!r}")

    def __enter__(self):
        _STACK.configs = [*getattr(_STACK, "configs", []), self]
        return self

    def __exit__(self, *exc):
        _STACK.configs = _STACK.configs[:-1]


def requantize_config(**kwargs) -> RequantizeConfig:
    """A configuration with ``rounding`` and ``compute_dtype`` changed from the defaults (module docstring).

    Examples
    --------
    >>> with relay.qnn.requantize_config(rounding="TONEAREST"):   # doctest: +SKIP
    ...     lib = relay.build(mod, "llvm")
    """
    unknown = sorted(set(kwargs) - {"rounding", "compute_dtype"})
    if unknown:
        raise KilnError(f"requantize_config: unknown option {', '.join(unknown)}; options: compute_dtype, rounding")
    return RequantizeConfig(**kwargs)


def current_requantize_config() -> RequantizeConfig:
    """The innermost configuration entered with ``with``, else the defaults."""
    configs = getattr(_STACK, "configs", [])
    return configs[-1] if configs else RequantizeConfig()


def resolve_rounding(rounding: str) -> str:
    """A call's ``rounding``, with ``"None"`` replaced by the current configuration's."""
    return current_requantize_config().rounding if rounding in ("None", None, "") else rounding
