"""Tables filled by a decorator next to what they hold: one type for every "value per operator" table.

A pass's per-operator rules (fold-scale preparations, layout rules, rewrite rules), the ONNX converters, and the
like are each a :class:`Registry`: ``@table.register("nn.relu", "nn.leaky_relu")`` on the rule registers it where
it is defined. Registration is strict, so forgetting or misspelling fails loudly at import instead of reading as
"no rule": a key the table's ``validate`` refuses (for :func:`op_table`, a name that is no registered operator) and a
second value for one key (unless the table holds several per key) raise :class:`~kiln.error.KilnError`.
"""

from ..error import KilnError
from .op import has_op

__all__ = ["Registry", "op_table"]


class Registry:
    """Values by key, registered with the :meth:`register` decorator.

    Parameters
    ----------
    what : str
        What a value is, for error messages (``"ForwardFoldScaleAxis preparation"``).
    validate : callable, optional
        ``validate(key) -> bool``; keys it refuses raise at registration.
    multiple : bool
        Hold a tuple of values per key, in registration order (rewrite rules), instead of one.

    Examples
    --------
    >>> rules = op_table("layout rule")
    >>> @rules.register("nn.relu")
    ... def relu_rule(call):
    ...     return None
    >>> rules.get("nn.relu") is relu_rule
    True
    """

    def __init__(self, what, validate=None, multiple=False):
        self.what = what
        self.validate = validate
        self.multiple = multiple
        self._values: dict = {}

    def register(self, *keys):
        """Decorator registering the decorated value under each of ``keys``."""

        def wrap(value):
            for key in keys:
                self.add(key, value)
            return value

        return wrap

    def add(self, key, value):
        """Register ``value`` under ``key`` (see the class docstring for what is refused)."""
        if self.validate is not None and not self.validate(key):
            raise KilnError(f"{self.what} registered for {key!r}, which is not known")
        if self.multiple:
            self._values[key] = (*self._values.get(key, ()), value)
        elif key in self._values:
            raise KilnError(f"a second {self.what} registered for {key!r}")
        else:
            self._values[key] = value

    def get(self, key, default=None):
        """The value (or tuple of values) of ``key``, or ``default``."""
        return self._values.get(key, default)

    def __getitem__(self, key):
        try:
            return self._values[key]
        except KeyError:
            raise KilnError(f"no {self.what} is registered for {key!r}") from None

    def __contains__(self, key):
        return key in self._values

    def __iter__(self):
        return iter(self._values)

    def __len__(self):
        return len(self._values)

    def items(self):
        """``(key, value)`` pairs."""
        return self._values.items()


def op_table(what, multiple=False, extra_keys=()) -> Registry:
    """A :class:`Registry` keyed by operator names: a name that is no registered operator (nor one of
    ``extra_keys``, such as ``"TupleGetItem"``) is refused at registration."""
    return Registry(what, lambda key: key in extra_keys or has_op(key), multiple)
