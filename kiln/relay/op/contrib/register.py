"""The pattern tables of external code generators, by compiler name (TVM's ``relay.op.contrib.register``)."""

from ....error import KilnError

_PATTERN_TABLES: dict = {}
# tables built on first request: kiln's own, whose patterns need relay.dataflow_pattern, which cannot be imported
# while the operators themselves are being registered
_DEFERRED: dict = {}


def register_pattern_table(compiler, table=None):
    """Register the pattern table of the external compiler ``compiler``; usable as a decorator.

    Parameters
    ----------
    compiler : str
        The compiler's name (the prefix of its composite functions' names: ``"dnnl.conv2d_relu"``).
    table : callable, optional
        A function returning the table: a list of ``(name, pattern)`` or ``(name, pattern, check)``, as
        ``MergeComposite`` takes it. It is called once, at registration.

    Returns
    -------
    callable
        ``table``, or the decorator when ``table`` is omitted.
    """
    if not isinstance(compiler, str) or not compiler:
        raise KilnError(f"register_pattern_table: the compiler must be a non-empty name, got {compiler!r}")

    def _register(fn):
        if not callable(fn):
            raise KilnError(f"register_pattern_table({compiler!r}): the table must be a function returning it")
        _PATTERN_TABLES[compiler] = fn()
        return fn

    return _register(table) if table is not None else _register


def defer_pattern_table(compiler, table):
    """Register the function ``table`` building ``compiler``'s pattern table; it runs on the first request."""
    _DEFERRED[compiler] = table


def get_pattern_table(compiler):
    """The pattern table registered for ``compiler``, or None when it has none."""
    if compiler not in _PATTERN_TABLES and compiler in _DEFERRED:
        _PATTERN_TABLES[compiler] = _DEFERRED.pop(compiler)()
    return _PATTERN_TABLES.get(compiler)
