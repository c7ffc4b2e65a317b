"""The shape ``reshape`` produces from its ``newshape`` (TVM's special values 0, -1, -2, -3, -4), for static shapes
and for shapes with ``relay.Any`` dimensions; shared by the type relation, the reference and the dyn form."""

import math

from ...error import TypeInferenceError
from ...ir.type import Any, is_any

__all__ = ["reshape_shape"]


def reshape_shape(in_shape, newshape, allowzero=0) -> tuple:
    """The shape ``reshape`` produces, following TVM's special values.

    ``0`` copies the input dimension at the same position, ``-1`` infers one dimension, ``-2`` copies every remaining
    input dimension, ``-3`` merges two consecutive input dimensions, ``-4`` splits one input dimension into the next
    two values (one of which may be ``-1``).

    Examples
    --------
    >>> reshape_shape((2, 3, 4), (0, -1))
    (2, 12)
    >>> reshape_shape((2, 3, 4), (-4, 1, 2, -2))
    (1, 2, 3, 4)
    """
    in_shape = tuple(in_shape)
    out: list = []
    src = 0
    infer_at = None
    derived_any = False  # a dynamic output dimension computed from dynamic input ones, not copied
    i = 0
    newshape = tuple(newshape)
    while i < len(newshape):
        v = newshape[i]
        if v > 0 or (v == 0 and allowzero):
            out.append(v)
            src += 1
        elif v == 0:
            if src >= len(in_shape):
                raise TypeInferenceError(f"reshape: newshape {newshape} copies dimension {src} of shape {in_shape}")
            out.append(in_shape[src])
            src += 1
        elif v == -1:
            if infer_at is not None:
                raise TypeInferenceError(f"reshape: newshape {newshape} has more than one -1")
            infer_at = len(out)
            out.append(1)
            src += 1
        elif v == -2:
            out.extend(in_shape[src:])
            src = len(in_shape)
        elif v == -3:
            if src + 1 >= len(in_shape):
                raise TypeInferenceError(f"reshape: -3 in {newshape} needs two input dimensions at {src}")
            out.append(in_shape[src] * in_shape[src + 1])
            derived_any = derived_any or is_any(out[-1])
            src += 2
        elif v == -4:
            if i + 2 >= len(newshape) or src >= len(in_shape):
                raise TypeInferenceError(f"reshape: -4 in {newshape} must be followed by two values")
            d0, d1 = newshape[i + 1], newshape[i + 2]
            whole = in_shape[src]
            if is_any(whole):
                out.extend([whole if d0 == -1 else d0, whole if d1 == -1 else d1])
                derived_any, src, i = True, src + 1, i + 3
                continue
            if d0 == -1:
                d0 = whole // d1
            if d1 == -1:
                d1 = whole // d0
            if d0 * d1 != whole:
                raise TypeInferenceError(f"reshape: cannot split dimension {whole} into {d0} x {d1}")
            out.extend([d0, d1])
            src += 1
            i += 2
        else:
            raise TypeInferenceError(f"reshape: invalid value {v} in newshape {newshape}")
        i += 1
    total = math.prod(in_shape)
    if is_any(total) or any(is_any(d) for d in out):
        return _reshape_dynamic(in_shape, out, infer_at, derived_any)
    if infer_at is not None:
        known = math.prod(d for j, d in enumerate(out) if j != infer_at)
        if known == 0 or total % known:
            raise TypeInferenceError(f"reshape: cannot infer -1 in {newshape} for input shape {in_shape}")
        out[infer_at] = total // known
    if math.prod(out) != total:
        raise TypeInferenceError(f"reshape: cannot reshape {in_shape} ({total} elements) to {tuple(out)}")
    return tuple(out)


def _reshape_dynamic(in_shape, out, infer_at, derived_any) -> tuple:
    """:func:`reshape_shape`'s result when dimensions are known only at run time (the shape function checks the
    sizes then). The ``-1`` is inferred statically when the dynamic dimensions were only copied (``0``, ``-2``):
    ``(?, 3, 2)`` to ``(0, -1)`` is ``(?, 6)``; otherwise it is dynamic too."""
    if infer_at is not None:
        static_in = math.prod(d for d in in_shape if not is_any(d))
        static_out = math.prod(d for j, d in enumerate(out) if j != infer_at and not is_any(d))
        copied = not derived_any and sum(map(is_any, out)) == sum(map(is_any, in_shape))
        if copied and static_out and not static_in % static_out:
            out[infer_at] = static_in // static_out
        else:
            out[infer_at] = Any()
    return tuple(out)
