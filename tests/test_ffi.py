"""``tvm._ffi``: TVM's names for the error base class and the function registry."""

import pytest

import kiln
from kiln.error import KilnError, TypeInferenceError


def test_tvm_error_from_ffi_catches_every_kiln_error():
    assert kiln._ffi.base.TVMError is KilnError
    with pytest.raises(kiln._ffi.base.TVMError):
        raise TypeInferenceError("bad")


def test_ffi_registry_is_the_runtime_registry():
    @kiln._ffi.register_func("kiln_test.ffi_twice")
    def twice(x):
        return 2 * x

    assert kiln._ffi.get_global_func("kiln_test.ffi_twice")(21) == 42
    assert kiln.get_global_func("kiln_test.ffi_twice") is kiln._ffi.get_global_func("kiln_test.ffi_twice")
