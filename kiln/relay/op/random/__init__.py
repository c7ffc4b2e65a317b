"""Pseudorandom number operators (TVM's ``relay.random``): Threefry keys, their generation and splitting, and the
uniform, normal and multinomial distributions (:mod:`.kernel`)."""

from .kernel import *  # noqa: F403
from .kernel import __all__  # noqa: F401
