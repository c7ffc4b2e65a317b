"""memoize: one call per key within a run, and results of arrays saved (as .npz, no pickle) and read back."""

import numpy as np
import pytest

from kiln.contrib import pickle_memoize
from kiln.error import KilnError

CALLS: list = []  # global, not closed over: a memoized function's free variables are part of its key


def test_memoize_and_save(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(pickle_memoize.Cache, "cache_by_key", {})
    CALLS.clear()
    n = 4

    @pickle_memoize.memoize("tests.memo", save_at_exit=True)
    def ref(scale):
        CALLS.append(scale)
        return np.arange(n) * scale, np.ones((2, n))

    a1, _ = ref(2)
    a2, _ = ref(2)
    ref(3)
    assert CALLS == [2, 3] and a1 is a2
    pickle_memoize.Cache.cache_by_key["tests.memo.ref"].save()
    assert (tmp_path / ".kiln_memoize" / "tests.memo.ref.npz").exists()

    pickle_memoize.Cache.cache_by_key.clear()

    @pickle_memoize.memoize("tests.memo", save_at_exit=True)
    def ref(scale):  # noqa: F811  (a new run of the same function)
        CALLS.append(scale)
        return np.zeros(n)  # closes over n as the first did: the same key

    again, ones = ref(3)
    assert CALLS == [2, 3]
    np.testing.assert_array_equal(again, np.arange(4) * 3)
    assert isinstance(again, np.ndarray) and ones.shape == (2, 4)


def test_unhashable_key(monkeypatch):
    monkeypatch.setattr(pickle_memoize.Cache, "cache_by_key", {})

    @pickle_memoize.memoize("tests.memo_bad")
    def f(x):
        return np.zeros(1)

    with pytest.raises(KilnError, match="a key value must be"):
        f([1, 2])
    with pytest.raises(KilnError, match="positional"):
        f(x=1)
