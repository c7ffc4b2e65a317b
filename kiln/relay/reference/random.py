"""Numpy values of the random-number operators (``random.*``): the kernels of :mod:`kiln.topi.testing.random`,
which compute exactly what the compiled ones do (the same bits, the same float operations)."""

from ...topi.testing import random as R
from .common import register


@register("random.threefry_generate")
def threefry_generate(attrs, key):
    return R.threefry_generate_python(key, attrs.out_shape)


@register("random.threefry_split")
def threefry_split(attrs, key):
    return R.threefry_split_python(key)


@register("random.uniform")
def uniform(attrs, key, low, high):
    return R.uniform_python(key, low, high, attrs.out_shape, attrs.out_dtype)


@register("random.normal")
def normal(attrs, key, mean, scale):
    return R.normal_python(key, mean, scale, attrs.out_shape, attrs.out_dtype)


@register("random.multinomial")
def multinomial(attrs, key, probs):
    return R.multinomial_python(key, probs, attrs.num_samples)
