"""Pseudorandom number kernels (TVM's ``topi.random``): the Threefry generator and the uniform, normal and
multinomial distributions drawn from it (:mod:`.kernel`)."""

from .kernel import *  # noqa: F403
from .kernel import __all__  # noqa: F401
