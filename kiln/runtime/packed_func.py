"""PackedFunc and the global function registry (TVM's ``tvm.register_func`` / ``tvm.get_global_func``).

The registry is how layers meet without importing each other: a code generator registers ``"target.build.llvm"``,
and ``relay.build`` looks it up by name.
"""

from ..error import KilnError


class PackedFunc:
    """A callable with a name, as returned by ``Module[name]`` or :func:`get_global_func`."""

    __slots__ = ("_func", "name")

    def __init__(self, func, name=""):
        self._func = func
        self.name = name or getattr(func, "__name__", "")

    def __call__(self, *args, **kwargs):
        return self._func(*args, **kwargs)

    def __repr__(self):
        return f"<PackedFunc {self.name}>"


_GLOBAL_FUNCS: dict[str, PackedFunc] = {}


def register_func(name, f=None, override=False):
    """Register ``f`` under the global ``name``; usable as ``@register_func("my.func")``.

    Examples
    --------
    >>> @register_func("demo.add_one")
    ... def add_one(x):
    ...     return x + 1
    >>> get_global_func("demo.add_one")(1)
    2
    """
    if callable(name) and f is None:
        func = name
        return register_func(func.__name__, func, override)

    def register(func):
        if name in _GLOBAL_FUNCS and not override:
            raise KilnError(f"global function {name!r} is already registered (pass override=True to replace it)")
        _GLOBAL_FUNCS[name] = func if isinstance(func, PackedFunc) else PackedFunc(func, name)
        return func

    return register(f) if f is not None else register


def get_global_func(name, allow_missing=False):
    """Return the global function ``name``; None if missing and ``allow_missing``, else raise KilnError."""
    func = _GLOBAL_FUNCS.get(name)
    if func is None and not allow_missing:
        raise KilnError(f"global function {name!r} is not registered")
    return func


def list_global_func_names() -> list[str]:
    """Return the names of every registered global function."""
    return sorted(_GLOBAL_FUNCS)
