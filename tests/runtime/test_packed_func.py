import pytest

import kiln
from kiln.error import KilnError
from kiln.runtime import list_global_func_names


def test_register_and_get():
    @kiln.register_func("test.packed.add_one")
    def add_one(x):
        return x + 1

    f = kiln.get_global_func("test.packed.add_one")
    assert f(1) == 2 and f.name == "test.packed.add_one"
    assert "test.packed.add_one" in list_global_func_names()


def test_duplicate_and_missing():
    kiln.register_func("test.packed.dup", lambda: 1)
    with pytest.raises(KilnError, match="already registered"):
        kiln.register_func("test.packed.dup", lambda: 2)
    kiln.register_func("test.packed.dup", lambda: 3, override=True)
    assert kiln.get_global_func("test.packed.dup")() == 3
    assert kiln.get_global_func("test.packed.missing", allow_missing=True) is None
    with pytest.raises(KilnError, match="test.packed.missing"):
        kiln.get_global_func("test.packed.missing")
