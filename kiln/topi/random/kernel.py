"""Splittable counter-based random numbers (TVM's ``topi.random``): the Threefry generator and the distributions
built on its bits.

A generator is a ``uint64[10]`` tensor, the encoding e4 of Claessen and Palka's "Splittable Pseudorandom Number
Generators using Cryptographic Hashing" that TVM uses::

    words: 0 1 2 3 | 4 5  | 6 7     | 8 9
    usage: key     | path | counter | the bit where the next step of the path goes (one bit set, from the left)

The hash is TVM's Threefry: the Threefish-256 block function (four 64-bit words, no tweak) with 20 rounds, a key
injection before each group of four rounds (five injections, none after the last round), the Skein rotation
constants and the word permutation ``(0, 3, 2, 1)`` after every round; block ``i`` of a generation hashes the words
4..7 of the state, each plus ``i``, under the key words 0..3. Its mixing step is the one TVM's kernel computes, not
Threefish's: TVM stores the step's first result ``a + b`` before computing its second from the stored words, so the
second is ``(a + 2b) ^ rotl(b)`` where Threefish has ``(a + b) ^ rotl(b)``. kiln computes the same, so a key gives
the numbers it gives in TVM (TVM's tests pin some of them).

* ``threefry_generate(gen, shape)`` hashes blocks ``0 .. n // 4 - 1``, then, for the ``n % 4`` last numbers, one
  block whose counter word 7 is advanced by ``n // 4 * 4``; the new generator's counter advances by ``n`` rounded up
  to a multiple of 4. When the counter has no room for ``n`` more (``word7 >= 2**64 - 1 - n``) the generator first
  moves to a fresh branch: a 1 appended to the path, the counter reset; when the path is full too (both position
  words 0), the key becomes the hash of the key with an all-ones counter and the path restarts.
* ``threefry_split(gen)`` appends a 0 (left) or a 1 (right) to the path; when the path is full, the key becomes the
  hash of the key and words 4..7, and the two results take the paths ``0`` and ``1``.

Two slips of TVM's kernel are not copied. Its "path is full" test is written ``gen[8] == 0 and gen[9] == 0`` in
Python, which evaluates to ``gen[8] == 0`` alone, so its path holds 64 steps instead of 128; kiln tests both words
(the numbers differ from TVM's only after 64 nested splits). And it hashes the fresh key from a two-word counter
buffer read as four words (two past its end); kiln uses four all-ones words.

The kernels are sequential statements (``te.extern``): one loop over the blocks, each hash 100 let-bound scalar
steps, so the compiled code keeps the four words in registers.
"""

import math

from ...error import OpNotImplemented, TIRValueError
from ...te.extern import extern
from ...te.operation import compute, reduce_axis
from ...te.operation import sum as _te_sum
from ...tir import intrin as _intrin
from ...tir import ir_builder
from ...tir import op as _op
from ...tir.buffer import decl_buffer
from ..reduction import argmin
from ..utils import get_const_tuple

__all__ = ["threefry_generate", "threefry_split", "threefry_test_wrapping", "uniform", "normal", "multinomial",
           "ROTATIONS", "PERMUTATION", "KEY_PARITY"]

ROTATIONS = ((14, 16), (52, 57), (23, 40), (5, 37), (25, 33), (46, 12), (58, 22), (32, 32))
"""The Threefish-256 rotation amounts, per round modulo 8, of the two word pairs (Skein paper, table 4)."""
PERMUTATION = (0, 3, 2, 1)
"""Word ``j`` after a round is word ``PERMUTATION[j]`` before it."""
KEY_PARITY = 0x1BD11BDAA9FC1A22
"""The constant the fifth key word starts from (the xor of the four key words with it)."""
ROUNDS = 20
ALL_ONES = 2**64 - 1


def _u64(value):
    return _op.const(value, "uint64")


def _key_schedule(ib, key):
    """The five key words (the four of ``key`` and their parity word), let-bound."""
    words = [ib.let(f"key{j}", k) for j, k in enumerate(key)]
    parity = _u64(KEY_PARITY)
    for w in words:
        parity = parity ^ w
    return words + [ib.let("key4", parity)]


def _threefry(ib, keys, counter):
    """The four words of the Threefry hash of ``counter`` (four uint64 expressions) under the key schedule
    ``keys`` (:func:`_key_schedule`), each step a let-bound variable."""
    x = list(counter)
    for group in range(ROUNDS // 4):
        x = [ib.let(f"x{j}", x[j] + keys[(group + j) % 5] + (_u64(group) if j == 3 else _u64(0)))
             for j in range(4)]
        for r in range(4):
            rotation = ROTATIONS[(group * 4 + r) % 8]
            for j in range(2):
                a, b = x[2 * j], x[2 * j + 1]
                a = ib.let(f"x{2 * j}", a + b)
                rotated = (b << _u64(rotation[j])) | (b >> _u64(64 - rotation[j]))
                x[2 * j], x[2 * j + 1] = a, ib.let(f"x{2 * j + 1}", (a + b) ^ rotated)  # TVM's step (see above)
            x = [x[p] for p in PERMUTATION]
    return x


def _shift_position(ib, gen, out):
    """``out[8:10]`` = the path position ``gen[8:10]`` (a 128-bit word with one bit set) moved one bit right."""
    a, b = gen[8], gen[9]
    with ib.if_scope(_op.equal(a, _u64(1))):
        out[8], out[9] = _u64(0), _u64(1 << 63)
    with ib.else_scope():
        with ib.if_scope(_op.equal(a, _u64(0))):
            out[8], out[9] = _u64(0), b >> _u64(1)
        with ib.else_scope():
            out[8], out[9] = a >> _u64(1), _u64(0)


def _path_full(gen):
    return _op.logical_and(_op.equal(gen[8], _u64(0)), _op.equal(gen[9], _u64(0)))


def _generate_ir(gen, out_gen, out, count):
    """The statement of ``threefry_generate`` writing ``count`` numbers (see the module docstring)."""
    ib = ir_builder.create()
    gen, out_gen, out = ib.buffer_ptr(gen), ib.buffer_ptr(out_gen), ib.buffer_ptr(out)
    state = ib.allocate("uint64", (10,), name="state")
    with ib.if_scope(gen[7] < _u64(ALL_ONES - count)):
        for i in range(10):
            state[i] = gen[i]
    with ib.else_scope():  # no room left in the counter: move to a new branch of the path, or to a new key
        with ib.if_scope(_path_full(gen)):
            words = _threefry(ib, _key_schedule(ib, [gen[i] for i in range(4)]), [_u64(ALL_ONES)] * 4)
            for i in range(4):
                state[i] = words[i]
            for i, value in zip(range(4, 10), (0, 0, 0, 0, 1 << 63, 0), strict=True):
                state[i] = _u64(value)
        with ib.else_scope():
            for i in range(4):
                state[i] = gen[i]
            state[4], state[5] = gen[4] | gen[8], gen[5] | gen[9]
            state[6], state[7] = _u64(0), _u64(0)
            _shift_position(ib, gen, state)
    with ib.new_scope():  # the key words are let-bound once, for the loop over the blocks
        keys = _key_schedule(ib, [state[i] for i in range(4)])
        blocks = count // 4
        if blocks:
            with ib.for_range(0, blocks, name="block") as block:
                step = _op.cast(block, "uint64")
                words = _threefry(ib, keys, [state[4 + j] + step for j in range(4)])
                for j in range(4):
                    out[block * 4 + j] = words[j]
        if count % 4:
            state[7] = state[7] + _u64(blocks * 4)
            words = _threefry(ib, keys, [state[4 + j] for j in range(4)])
            for j in range(count % 4):
                out[blocks * 4 + j] = words[j]
    for i in range(6):
        out_gen[i] = state[i]
    out_gen[6] = _u64(0)
    out_gen[7] = state[7] + _u64(4 if count % 4 else count)
    out_gen[8], out_gen[9] = state[8], state[9]
    return ib.get()


def _static_shape(shape, what) -> tuple:
    """``shape`` as Python ints; OpNotImplemented for a size known only at run time (as in TVM, the number of
    random values is fixed when the kernel is built)."""
    shape = get_const_tuple(shape)
    if not all(isinstance(d, int) for d in shape):
        raise OpNotImplemented(f"topi.random.{what}: the shape {list(shape)} must be known when the kernel is built")
    return tuple(int(d) for d in shape)


def _check_generator(gen, what):
    if gen.dtype != "uint64" or get_const_tuple(gen.shape) != (10,):
        raise TIRValueError(f"topi.random.{what}: the generator must be uint64[10], got {gen.dtype}{list(gen.shape)}")


def threefry_generate(gen, out_shape):
    """Random ``uint64`` bits of ``out_shape`` from generator ``gen`` (see the module docstring).

    Parameters
    ----------
    gen : te.Tensor
        The generator state, ``uint64[10]`` (``relay.random.threefry_key``); do not use it again afterwards.
    out_shape : sequence of int

    Returns
    -------
    new_gen : te.Tensor
        The next generator state.
    bits : te.Tensor
        ``uint64`` numbers of ``out_shape``.
    """
    _check_generator(gen, "threefry_generate")
    out_shape = _static_shape(out_shape, "threefry_generate")
    count = math.prod(out_shape)
    new_gen = decl_buffer((10,), "uint64", "out_gen")
    bits = decl_buffer(out_shape, "uint64", "out_array")
    return extern([(10,), out_shape], [gen], lambda ins, outs: _generate_ir(ins[0], outs[0], outs[1], count),
                  out_buffers=[new_gen, bits], name="threefry_generate", tag="threefry_generate")


def _split_ir(gen, left, right):
    ib = ir_builder.create()
    gen, left, right = ib.buffer_ptr(gen), ib.buffer_ptr(left), ib.buffer_ptr(right)
    with ib.if_scope(_path_full(gen)):  # a new key, the hash of the old key and path and counter
        words = _threefry(ib, _key_schedule(ib, [gen[i] for i in range(4)]), [gen[4 + j] for j in range(4)])
        for out, path in ((left, 0), (right, 1 << 63)):
            for i in range(4):
                out[i] = words[i]
            for i, value in zip(range(4, 10), (path, 0, 0, 0, 1 << 62, 0), strict=True):
                out[i] = _u64(value)
    with ib.else_scope():
        for i in range(8):
            left[i] = gen[i]
            right[i] = gen[i]
        right[4], right[5] = gen[4] | gen[8], gen[5] | gen[9]
        _shift_position(ib, gen, left)
        _shift_position(ib, gen, right)
    return ib.get()


def threefry_split(gen):
    """Two new generators from ``gen``, independent of each other and of ``gen`` (see the module docstring).

    Returns
    -------
    left, right : te.Tensor
        ``uint64[10]`` generator states.
    """
    _check_generator(gen, "threefry_split")
    left, right = decl_buffer((10,), "uint64", "out_left"), decl_buffer((10,), "uint64", "out_right")
    return extern([(10,), (10,)], [gen], lambda ins, outs: _split_ir(ins[0], outs[0], outs[1]),
                  out_buffers=[left, right], name="threefry_split", tag="threefry_split")


def threefry_test_wrapping(target, device):
    """Whether unsigned 64-bit arithmetic wraps on ``target`` (Threefry needs it): ``2**64 - 1 + 1`` computed by a
    kernel from a value it reads, so no compile-time folding decides it."""
    import numpy as np

    from ...runtime.ndarray import array
    from ...runtime.packed_func import get_global_func
    from ...te.operation import placeholder
    from ...te.schedule import create_schedule

    x = placeholder((1,), "uint64", name="x")
    y = compute((1,), lambda i: x[i] + _u64(1), name="wrapped")
    f = get_global_func("driver.build")(create_schedule(y.op), [x, y], target=target)
    out = array(np.ones(1, "uint64"), device)
    f(array(np.array([ALL_ONES], "uint64"), device), out)
    return bool(out.numpy()[0] == 0)


def _unit_interval(bits, dtype):
    """A number of ``[0, 1)`` of ``dtype`` from the low bits of ``bits``: its top fraction bits under the exponent of
    1.0, minus 1 (TVM's construction)."""
    nbits, nfraction = (32, 23) if dtype == "float32" else (64, 52)
    udtype = f"uint{nbits}"
    one = ((1 << (nbits - nfraction - 2)) - 1) << nfraction
    mantissa = (_op.cast(bits, udtype) >> _op.const(nbits - nfraction, udtype)) | _op.const(one, udtype)
    return _op.reinterpret(dtype, mantissa) - _op.const(1.0, dtype)


def _check_float(dtype, what):
    if dtype not in ("float32", "float64"):
        raise TIRValueError(f"topi.random.{what}: only float32 and float64 are generated, got {dtype}")


def uniform(gen, low, high, out_shape, out_dtype):
    """Numbers uniform on ``[low, high)`` of ``out_shape`` and ``out_dtype`` (float32 or float64).

    Parameters
    ----------
    gen : te.Tensor
        The generator, ``uint64[10]``.
    low, high : te.Tensor
        0-d tensors of ``out_dtype``: the bounds.

    Returns
    -------
    new_gen : te.Tensor
    values : te.Tensor
    """
    _check_float(out_dtype, "uniform")
    new_gen, bits = threefry_generate(gen, out_shape)

    def fcompute(*i):
        width = high() - low()
        return _unit_interval(bits(*i), out_dtype) * width + low()

    return new_gen, compute(bits.shape, fcompute, name="T_uniform", tag="random_uniform")


def normal(gen, mean, scale, out_shape, out_dtype):
    """Normally distributed numbers (the Box-Muller transform of two uniform ones, TVM's formula:
    ``sqrt(-2 log(1 - u0)) * sin(2 pi u1) * scale + mean``) of ``out_shape`` and ``out_dtype``.

    Returns
    -------
    new_gen : te.Tensor
    values : te.Tensor
    """
    _check_float(out_dtype, "normal")
    out_shape = _static_shape(out_shape, "normal")
    new_gen, bits = threefry_generate(gen, (2,) + out_shape)

    def fcompute(*i):
        u0, u1 = _unit_interval(bits(0, *i), out_dtype), _unit_interval(bits(1, *i), out_dtype)
        radius = _intrin.sqrt(_op.const(-2.0, out_dtype) * _intrin.log(_op.const(1.0, out_dtype) - u0))
        angle = _op.const(2.0 * math.pi, out_dtype) * u1
        return radius * _intrin.sin(angle) * scale() + mean()

    return new_gen, compute(out_shape, fcompute, name="T_normal", tag="random_normal")


def multinomial(gen, probs, num_samples):
    """``num_samples`` indices into the last axis of ``probs`` drawn with those weights (negative weights are 0),
    independently per leading index, as int32. A draw is the first index whose cumulative normalized weight
    (float32) exceeds a uniform number of ``[0, 1)``; a row of no positive weight draws 0.

    Returns
    -------
    new_gen : te.Tensor
    indices : te.Tensor
        ``probs.shape[:-1] + (num_samples,)``, int32.
    """
    shape = _static_shape(probs.shape, "multinomial")
    if not shape:
        raise TIRValueError("topi.random.multinomial: probs must have at least one axis")
    lead, n = tuple(shape[:-1]), shape[-1]
    weight = compute(shape, lambda *i: _op.maximum(_op.cast(probs(*i), "float32"), _op.const(0.0, "float32")),
                     name="T_weight", tag="elemwise")
    k = reduce_axis((0, n), name="k")
    total = compute(lead, lambda *i: _te_sum(weight(*i, k), axis=[k]), name="T_total", tag="comm_reduce")
    c = reduce_axis((0, n), name="c")
    cumulative = compute(shape, lambda *i: _te_sum(weight(*i[:-1], c) / total(*i[:-1]), axis=[c],
                                                   where=_op.less_equal(c, i[-1])), name="T_cumulative",
                         tag="comm_reduce")
    new_gen, bits = threefry_generate(gen, lead + (num_samples,))

    def above(*i):  # (..., category, sample): how far the cumulative weight is above the draw, or 1 below it
        gap = cumulative(*i[:-1]) - _unit_interval(bits(*i[:-2], i[-1]), "float32")
        return _op.select(gap > _op.const(0.0, "float32"), gap, _op.const(1.0, "float32"))

    gaps = compute(lead + (n, num_samples), above, name="T_gap", tag="injective")
    return new_gen, argmin(gaps, axis=-2)
