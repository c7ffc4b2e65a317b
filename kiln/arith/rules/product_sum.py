"""TVM's ``ComparisonOfProductAndSum`` extension: ``(A + B) * C`` against ``(A * B) * D`` for positive terms.

With every term positive, ``(A + B) * C < (A * B) * D`` is ``1/(A*D) + 1/(B*D) < 1/C``; the bounds of A, B, C and D
can decide it, e.g. ``x * y < (x + y) * 2048`` for ``x, y`` in ``[1, 4096)`` is false only when ``x*y`` outgrows
``2048 * (x + y)``, which it cannot there.
"""

from ..pattern import pvars
from .common import GT_, LT_, UNKNOWN

A, B, C, D = pvars("A B C D")
_WITH_D = ((A + B) * C + (A * B) * D, (A + B) * C + (B * A) * D, (A * B) * D + (A + B) * C,
           (B * A) * D + (A + B) * C)
_WITHOUT_D = ((A + B) * C + (A * B), (A + B) * C + (B * A), (A * B) + (A + B) * C, (B * A) + (A + B) * C)
_INF = float("inf")


def _split(diff):
    for pat in _WITH_D:
        m = pat.match(diff)
        if m is not None:
            return m.A, m.B, m.C, m.D
    for pat in _WITHOUT_D:
        m = pat.match(diff)
        if m is not None:
            return m.A, m.B, m.C, None
    return None


def _neg(b):
    return (-b[1], -b[0])


def compare_product_and_sum(s, x, y):
    """What the bounds say of ``x`` against ``y`` when ``x - y`` simplifies to ``(A + B) * C - (A * B) * D``."""
    from ...tir import op as _op

    parts = _split(s.visit_expr(_op.subtract(x, y)))
    if parts is None:
        return UNKNOWN
    a, b, c, d = parts

    def bound(e):
        r = s.bound(e)
        return (r.min_value, r.max_value)

    ab, bb, cb = bound(a), bound(b), bound(c)
    db = _neg(bound(d)) if d is not None else (-1, -1)  # D: minus the coefficient of A*B in x - y
    upper = db[1] < 0
    if upper:
        cb, db = _neg(cb), _neg(db)
    if cb[1] < 0:
        ab, bb, cb = _neg(ab), _neg(bb), _neg(cb)
    if not all(t[0] > 0 for t in (ab, bb, cb, db)):
        return UNKNOWN
    big = 2 ** 62
    if db[1] >= big:
        return UNKNOWN
    if min(ab[1], bb[1]) * db[1] <= cb[0]:
        positive = True
    elif ab[1] < big and bb[1] < big:
        positive = ab[1] * bb[1] * db[1] < cb[0] * (ab[1] + bb[1])
    else:
        positive = False
    if not positive:
        return UNKNOWN
    return LT_ if upper else GT_
