"""kiln.error: one base class, reachable by TVM's names, deriving from the built-in classes TVM raises (issue 13)."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.error import KilnError, RuntimeArgumentError, TVMError
from kiln.ir.pass_context import ConfigError


def test_tvm_names_reach_the_base_class():
    assert kiln.TVMError is TVMError is KilnError and kiln.error.TVMError is KilnError
    assert issubclass(KilnError, RuntimeError)  # TVM's TVMError is a RuntimeError


def test_errors_are_caught_by_tvm_and_builtin_names():
    with pytest.raises(kiln.TVMError), kiln.transform.PassContext(config={"no.such.key": 1}):
        pass
    with pytest.raises(ValueError, match="no.such.key"), kiln.transform.PassContext(config={"no.such.key": 1}):
        pass
    assert issubclass(ConfigError, ValueError) and issubclass(RuntimeArgumentError, TypeError)


def test_param_dict_bytes_are_a_bytearray():
    blob = relay.save_param_dict({"w": kiln.nd.array(np.arange(3, dtype="float32"))})
    assert isinstance(blob, bytearray)  # as TVM returns it
    np.testing.assert_array_equal(relay.load_param_dict(blob)["w"].numpy(), np.arange(3, dtype="float32"))
