"""Memoize a function's results across calls and runs (TVM's ``tvm.contrib.pickle_memoize``), used by tests to
compute reference data once.

``@memoize("topi.tests.test_x.verify")`` on a function caches its result per call: the key is the values the
function closes over (its free variables) and its positional arguments, which must be str, int, float or tuples of
them. Results are kept in memory for the process, and with ``save_at_exit=True`` written when the process exits
to ``.kiln_memoize/<key>.<function>.npz`` under the working directory, read back by the next run.

kiln refuses pickle (loading a pickle runs code), so the file is a numpy ``.npz`` read with ``allow_pickle=False``:
only numpy arrays, and tuples or lists of them, are saved; other results stay in memory.
"""

import atexit
import functools
import json
import os

import numpy as np

from ..error import KilnError

__all__ = ["memoize", "Cache"]

CACHE_DIR = ".kiln_memoize"
_ALLOWED = (str, int, float)


class Cache:
    """The results of one memoized function, by key, and the file they are saved to.

    Parameters
    ----------
    key : str
        The file's name (without directory).
    save_at_exit : bool
        Whether to write the results when the process exits.
    """

    cache_by_key: dict = {}

    def __init__(self, key, save_at_exit):
        self.path = os.path.join(CACHE_DIR, key + ".npz")
        self.cache = _load(self.path)
        self.dirty = False
        self.save_at_exit = save_at_exit

    def save(self):
        """Write the results that are arrays (or tuples/lists of arrays) to the cache file, if any are new."""
        if not self.dirty:
            return
        index, arrays = [], {}
        for key, value in self.cache.items():
            parts = _as_arrays(value)
            if parts is None:
                continue
            kind, items = parts
            n = len(index)
            index.append([_to_json(key), kind, len(items)])
            arrays.update({f"e{n}_{j}": a for j, a in enumerate(items)})
        os.makedirs(CACHE_DIR, exist_ok=True)
        np.savez(self.path, __index__=np.array(json.dumps(index)), **arrays)
        self.dirty = False


def _as_arrays(value):
    if isinstance(value, np.ndarray):
        return "array", [value]
    if isinstance(value, tuple | list) and all(isinstance(v, np.ndarray) for v in value):
        return type(value).__name__, list(value)
    return None


def _to_json(key):
    return [list(k) if isinstance(k, tuple) else k for k in key]


def _load(path) -> dict:
    if not os.path.exists(path):
        return {}
    with np.load(path, allow_pickle=False) as data:
        cache = {}
        for n, (key, kind, count) in enumerate(json.loads(str(data["__index__"]))):
            items = [data[f"e{n}_{j}"] for j in range(count)]
            key = tuple(tuple(k) if isinstance(k, list) else k for k in key)
            cache[key] = items[0] if kind == "array" else (tuple(items) if kind == "tuple" else items)
        return cache


@atexit.register
def _atexit():
    for cache in Cache.cache_by_key.values():
        if cache.save_at_exit:
            cache.save()


def _check_key(key, fkey):
    for arg in key:
        for x in arg if isinstance(arg, tuple) else (arg,):
            if not isinstance(x, _ALLOWED):
                raise KilnError(f"memoize {fkey}: a key value must be a str, int, float or a tuple of them, got "
                                f"{type(x).__name__}")


def memoize(key, save_at_exit=False):
    """A decorator memoizing a function's results (see the module docstring).

    Parameters
    ----------
    key : str
        A name unique to the function (its results file is named after it).
    save_at_exit : bool
        Whether to save the results to disk when the process exits.

    Returns
    -------
    fmemoize : function
        The decorator.

    Examples
    --------
    >>> @memoize("tests.my_test.ref")
    ... def ref():
    ...     return np.ones(3)
    """

    def _register(f):
        fkey = f"{key}.{f.__name__}"
        if fkey not in Cache.cache_by_key:
            Cache.cache_by_key[fkey] = Cache(fkey, save_at_exit)
        cache = Cache.cache_by_key[fkey]
        closure = tuple(c.cell_contents for c in f.__closure__) if f.__closure__ else ()
        prefix = (len(closure), *closure)

        @functools.wraps(f)
        def memoized(*args, **kwargs):
            if kwargs:
                raise KilnError(f"memoize {fkey}: call with positional arguments only")
            call_key = prefix + args
            _check_key(call_key, fkey)
            if call_key not in cache.cache:
                cache.cache[call_key] = f(*args)
                cache.dirty = True
            return cache.cache[call_key]

        return memoized

    return _register
