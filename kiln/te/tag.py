"""Tag scopes (TVM's ``te.tag_scope``): a tag given to every ``te.compute`` made inside a ``with`` block or a
decorated function, so topi functions need not pass ``tag=`` to each compute. Scopes do not nest."""

import functools
import warnings

from ..error import NestedScopeError

__all__ = ["TagScope", "tag_scope"]


class TagScope:
    """A tag for the computes declared while it is active; a context manager and a decorator."""

    _current = None

    @classmethod
    def get_current(cls):
        """The active scope (None outside any); reading it marks the scope used."""
        if cls._current is not None:
            cls._current.accessed = True
        return cls._current

    def __init__(self, tag):
        self.tag = tag
        self.accessed = False

    def __enter__(self):
        if TagScope._current is not None:
            raise NestedScopeError(f"te.tag_scope({self.tag!r}) inside tag_scope({TagScope._current.tag!r}): "
                                   "tag scopes do not nest")
        TagScope._current = self
        return self

    def __exit__(self, ptype, value, trace):
        TagScope._current = None
        if not self.accessed and ptype is None:
            warnings.warn(f"Tag '{self.tag}' declared via TagScope was not used.", stacklevel=2)

    def __call__(self, fdecl):
        @functools.wraps(fdecl)
        def tagged(*args, **kwargs):
            with self:
                return fdecl(*args, **kwargs)

        return tagged


def tag_scope(tag):
    """A scope tagging the computes declared in it (used as ``with te.tag_scope("conv"):`` or as the decorator
    ``@te.tag_scope(tag="conv")``).

    Parameters
    ----------
    tag : str
        The tag.

    Returns
    -------
    scope : TagScope
    """
    return TagScope(tag)
