"""Lane counts of ``Ramp`` and ``Broadcast``: an integer, or a scalable count ``vscale() * k`` (TVM's scalable
vectors, whose dtype ``int32xvscalex4`` has ``-k`` lanes in :class:`kiln.tir.dtype.DataType`)."""

from ..error import TIRError
from .expr import Call, IntImm, Mul, PrimExpr


def vscale_factor(lanes):
    """``k`` when ``lanes`` is ``vscale() * k`` (a scalable lane count, TVM's ``tir.vscale`` intrinsic), else None."""
    for f, k in ((lanes.a, lanes.b), (lanes.b, lanes.a)) if isinstance(lanes, Mul) else ():
        if isinstance(f, Call) and f.op.name == "tir.vscale" and isinstance(k, IntImm) and k.value > 0:
            return k.value
    return None


def lanes_of(lanes, what):
    """The lanes a Ramp or Broadcast keeps and its dtype's lane count: an integer >= 2, or ``vscale() * k`` (kept as
    that expression; its dtype has ``-k`` lanes, as in TVM's ``DataType``)."""
    lanes = lanes.value if isinstance(lanes, IntImm) else lanes
    if isinstance(lanes, int) and lanes < 0:  # a scalable dtype's lane count
        return Mul(Call("int32", "tir.vscale", ()), IntImm("int32", -lanes)), lanes
    if isinstance(lanes, PrimExpr):
        if (k := vscale_factor(lanes)) is None:
            raise TIRError(f"{what}: lanes must be an integer or vscale() * k, got {lanes}")
        return (lanes if isinstance(lanes.a, Call) else Mul(lanes.b, lanes.a)), -k  # TVM's order: vscale() * k
    n = int(lanes)
    if n < 2:
        raise TIRError(f"{what}: needs at least 2 lanes (got {n})")
    return n, n
