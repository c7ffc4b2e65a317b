"""``tir.transform.Apply``: a pass that applies a Python function to every PrimFunc of a module (TVM's)."""

from .function_pass import prim_func_pass


def Apply(ftransform):  # noqa: N802  (TVM's name)
    """A PrimFunc pass calling ``ftransform(func)`` on each PrimFunc and keeping what it returns.

    Examples
    --------
    >>> add_target = Apply(lambda f: f.with_attr("target", "llvm"))   # doctest: +SKIP
    """

    def transform(func, mod, ctx):
        return ftransform(func)

    return prim_func_pass(transform, opt_level=0, name="Apply")
