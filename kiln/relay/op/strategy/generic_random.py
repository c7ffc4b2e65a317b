"""Generic computes of the random-number operators (:mod:`kiln.relay.op.random`): adapters from each call's
attributes to the kernels of :mod:`kiln.topi.random`, merged into :data:`.generic.COMPUTES`."""

from ....topi import random as RN

__all__ = ["RANDOM_COMPUTES"]

RANDOM_COMPUTES = {
    "random.threefry_generate": lambda attrs, inputs, out_type: list(RN.threefry_generate(inputs[0],
                                                                                          attrs.out_shape)),
    "random.threefry_split": lambda attrs, inputs, out_type: list(RN.threefry_split(inputs[0])),
    "random.uniform": lambda attrs, inputs, out_type: list(RN.uniform(inputs[0], inputs[1], inputs[2],
                                                                      attrs.out_shape, attrs.out_dtype)),
    "random.normal": lambda attrs, inputs, out_type: list(RN.normal(inputs[0], inputs[1], inputs[2],
                                                                    attrs.out_shape, attrs.out_dtype)),
    "random.multinomial": lambda attrs, inputs, out_type: list(RN.multinomial(inputs[0], inputs[1],
                                                                              attrs.num_samples)),
}
"""Relay operator name -> ``FTVMCompute`` of the random-number operators."""
