"""The VM's non-tensor values: ADTs (a tuple is the ADT of tag 0) and closures."""

__all__ = ["ADT", "VMClosure"]


class ADT(tuple):
    """An algebraic data type value: a constructor ``tag`` and its ``fields`` (TVM's ``runtime.container.ADT``).

    A Relay tuple is the ADT of tag 0. It is a Python tuple of its fields (so results unpack and index as tuples
    do), carrying its tag; ``adt.fields`` is the plain tuple.
    """

    tag: int

    def __new__(cls, tag, fields):
        adt = super().__new__(cls, fields)
        adt.tag = tag
        return adt

    @property
    def fields(self) -> tuple:
        """The fields, as a plain tuple."""
        return tuple(self)

    def __repr__(self):
        return f"ADT(tag={self.tag}, {len(self)} fields)"


class VMClosure:
    """A function value: the VM function ``func_index`` of ``executable`` with the values it captured, passed before
    the arguments (a VM takes back only the closures its own executable made: an index means nothing elsewhere)."""

    __slots__ = ("func_index", "captured", "executable")

    def __init__(self, func_index, captured, executable):
        self.func_index = func_index
        self.captured = tuple(captured)
        self.executable = executable

    def __repr__(self):
        return f"VMClosure(function #{self.func_index}, {len(self.captured)} captured)"
