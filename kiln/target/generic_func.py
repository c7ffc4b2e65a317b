"""Target-generic functions (TVM's ``tvm.target.generic_func``): a default implementation plus specializations
registered per target key (``"cpu"``, ``"arm_cpu"``...), chosen by the current target when called.

This is how a lower layer offers a hook a higher one fills: topi declares ``topi.nn.conv2d_alter_layout`` (by
default: no alteration) and the Relay operator strategies register the x86 one for ``"cpu"``, without topi knowing
Relay; users override a key with ``@topi.nn.conv2d_alter_layout.register("cpu", override=True)`` or TVM's
``TempOpAttr`` over the operator attribute that calls it.
"""

import functools

from ..error import KilnError
from .target import Target

__all__ = ["generic_func"]


def generic_func(fdefault):
    """Wrap ``fdefault`` as a target-generic function.

    The result calls the function registered (``.register(key)``) for the first of the current target's ``keys``
    that has one, else ``fdefault``. Keyword arguments are passed on.

    Examples
    --------
    >>> @generic_func
    ... def my_func(a):
    ...     return a + 1
    >>> @my_func.register("cpu")
    ... def my_func_cpu(a):
    ...     return a + 2
    >>> my_func(2)
    3
    >>> with Target("llvm"):
    ...     my_func(2)
    4
    """
    dispatch: dict = {}

    def register(key, func=None, override=False):
        """Register ``func`` (or the decorated function) for the target key(s) ``key``."""

        def do_register(impl):
            for k in [key] if isinstance(key, str) else list(key):
                if k in dispatch and not override:
                    raise KilnError(f"generic function {fdefault.__name__}: key {k!r} is already registered "
                                    f"(pass override=True to replace it)")
                dispatch[k] = impl
            return impl

        return do_register(func) if func is not None else do_register

    @functools.wraps(fdefault)
    def dispatch_func(*args, **kwargs):
        target = Target.current()
        if target is not None:
            for key in target.keys:
                if key in dispatch:
                    return dispatch[key](*args, **kwargs)
        return fdefault(*args, **kwargs)

    dispatch_func.fdefault = fdefault  # type: ignore[attr-defined]
    dispatch_func.register = register  # type: ignore[attr-defined]
    dispatch_func.dispatch_dict = dispatch  # type: ignore[attr-defined]
    return dispatch_func
