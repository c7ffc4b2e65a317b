"""The random-number operators of ``relay.random``, as TVM defines them: ``random.threefry_generate``,
``random.threefry_split``, ``random.uniform``, ``random.normal`` and ``random.multinomial``, and ``threefry_key``.

A key is a ``uint64[10]`` tensor holding a Threefry generator state (:mod:`kiln.topi.random` describes its words
and the algorithm). Every operator takes a key and returns a new one with its result; a key used twice gives the
same numbers twice, so a program passes each key on to exactly one use (or splits it first). The operators are
``OPAQUE``: their kernels are sequential statements, never fused.
"""

import sys

import numpy as np

from ....error import OpAttributeInvalid, TypeInferenceError
from ....ir.expr import RelayExpr
from ....ir.op import register_op_attr
from ....ir.type import TensorType, TupleType
from ....runtime.ndarray import array
from ...expr import Constant, const
from .. import attrs_random as A
from ..op import OpPattern, make_call, register_relay_op
from ..type_relations import NUMERIC, tensor_arg

__all__ = ["threefry_key", "threefry_generate", "threefry_split", "uniform", "normal", "multinomial"]

KEY_TYPE = TensorType((10,), "uint64")
"""The type of a Threefry key."""
_UINT64 = ("uint64",)
_RANDOM_FLOATS = ("float32", "float64")


def _key(types, op):
    key = tensor_arg(types, 0, f"{op} key")
    if key.shape != KEY_TYPE.shape:
        raise TypeInferenceError(f"{op}: the key must be a Threefry key {KEY_TYPE}, got {key}")
    return key


def _arg_types(types, attrs):
    """``FInferArgTypes``: an untyped key is a Threefry key, an untyped bound a scalar of the result dtype; the
    probabilities of ``multinomial`` need a type of their own."""
    out_dtype = getattr(attrs, "out_dtype", None)
    if out_dtype is None and any(t is None for t in types[1:]):
        raise TypeInferenceError("random.multinomial: probs has no type to infer the result from")
    return [t if t is not None else KEY_TYPE if i == 0 else TensorType((), out_dtype) for i, t in enumerate(types)]


def _generate_rel(types, attrs):
    _key(types, "random.threefry_generate")
    return TupleType([KEY_TYPE, TensorType(attrs.out_shape, "uint64")])


def _split_rel(types, attrs):
    _key(types, "random.threefry_split")
    return TupleType([KEY_TYPE, KEY_TYPE])


def _distribution_rel(op, bounds):
    def relation(types, attrs):
        if attrs.out_dtype not in _RANDOM_FLOATS:
            raise TypeInferenceError(f"{op}: only float32 and float64 numbers are generated, got out_dtype "
                                     f"{attrs.out_dtype}")
        _key(types, op)
        for index, name in enumerate(bounds, 1):
            bound = tensor_arg(types, index, f"{op} {name}")
            if bound != TensorType((), attrs.out_dtype):
                raise TypeInferenceError(f"{op}: {name} must be a scalar of the result dtype "
                                         f"{TensorType((), attrs.out_dtype)}, got {bound}")
        return TupleType([KEY_TYPE, TensorType(attrs.out_shape, attrs.out_dtype)])

    return relation


def _multinomial_rel(types, attrs):
    _key(types, "random.multinomial")
    probs = tensor_arg(types, 1, "random.multinomial probs")
    if probs.ndim < 1:
        raise TypeInferenceError(f"random.multinomial: probs must have at least one axis, got {probs}")
    return TupleType([KEY_TYPE, TensorType(tuple(probs.shape[:-1]) + (attrs.num_samples,), "int32")])


_OPS = {
    "random.threefry_generate": (1, _generate_rel, A.ThreefryGenerateAttrs, _UINT64),
    "random.threefry_split": (1, _split_rel, None, _UINT64),
    "random.uniform": (3, _distribution_rel("random.uniform", ("low", "high")), A.UniformAttrs,
                       (_UINT64, _RANDOM_FLOATS)),
    "random.normal": (3, _distribution_rel("random.normal", ("mean", "scale")), A.NormalAttrs,
                      (_UINT64, _RANDOM_FLOATS)),
    "random.multinomial": (2, _multinomial_rel, A.MultinomialAttrs, (_UINT64, NUMERIC)),
}
for _name, (_arity, _rel, _attrs, _dtypes) in _OPS.items():
    register_relay_op(_name, _arity, _rel, OpPattern.OPAQUE, _attrs, dtypes=_dtypes)
    register_op_attr(_name, "FInferArgTypes", _arg_types)


def threefry_key(seed):
    """A new Threefry key (a ``uint64[10]`` constant) from the integer ``seed`` (up to 256 bits).

    Examples
    --------
    >>> key = threefry_key(0)
    >>> key.data.numpy()[8] == 1 << 63
    True
    """
    if not isinstance(seed, int | np.integer) or not 0 <= int(seed) < 2**256:
        raise OpAttributeInvalid(f"threefry_key: the seed must be an integer in [0, 2**256), got {seed!r}")
    words = np.frombuffer(int(seed).to_bytes(32, sys.byteorder), dtype="uint64")
    return Constant(array(np.concatenate((words, np.array([0, 0, 0, 0, 1 << 63, 0], dtype="uint64")))))


def threefry_generate(key, shape):
    """``(new_key, bits)``: ``uint64`` random numbers of ``shape`` from ``key`` (index the call, or wrap it in a
    ``TupleWrapper``). Do not use ``key`` again; pass ``new_key`` on."""
    return make_call("random.threefry_generate", [key], A.ThreefryGenerateAttrs(shape))


def threefry_split(key):
    """``(key1, key2)``: two keys independent of each other, from ``key`` (which is not to be used again)."""
    return make_call("random.threefry_split", [key])


def _bound(value, dtype):
    return value if isinstance(value, RelayExpr) else const(value, dtype=dtype)


def uniform(key, shape, dtype="float32", low=0.0, high=1.0):
    """``(new_key, values)``: numbers of ``shape`` and ``dtype`` (float32 or float64) uniform on ``[low, high)``
    (floats or scalar expressions of ``dtype``)."""
    attrs = A.UniformAttrs(shape, dtype)
    return make_call("random.uniform", [key, _bound(low, attrs.out_dtype), _bound(high, attrs.out_dtype)], attrs)


def normal(key, shape, dtype="float32", mean=0.0, scale=1.0):
    """``(new_key, values)``: normally distributed numbers of ``shape`` and ``dtype`` with ``mean`` and standard
    deviation ``scale``."""
    attrs = A.NormalAttrs(shape, dtype)
    return make_call("random.normal", [key, _bound(mean, attrs.out_dtype), _bound(scale, attrs.out_dtype)], attrs)


def multinomial(key, probs, num_samples):
    """``(new_key, indices)``: ``num_samples`` int32 indices into the last axis of ``probs`` per leading index,
    drawn with those weights (negative weights count as 0; they need not sum to 1)."""
    return make_call("random.multinomial", [key, probs], A.MultinomialAttrs(int(num_samples)))
