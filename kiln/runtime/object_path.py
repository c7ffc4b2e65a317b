"""``ObjectPath`` (TVM's ``tvm.runtime.ObjectPath``): where in an IR object a part sits, as a chain of steps from
the root (``root().attr("body").array_index(2)``); structural equality reports its first mismatch with two of them."""

from dataclasses import dataclass

__all__ = ["ObjectPath"]


@dataclass(frozen=True, eq=False)
class ObjectPath:
    """A path: ``parent`` and the ``step`` from it (``("attr", name)``, ``("index", i)``, ``("missing_index", i)``,
    ``("map", key)``, ``("missing_map",)``); the root has neither."""

    parent: "ObjectPath | None" = None
    step: tuple = ()

    @staticmethod
    def root(root_name=None) -> "ObjectPath":
        """The empty path."""
        return ObjectPath(None, ("root", root_name))

    def attr(self, attr_key) -> "ObjectPath":
        return ObjectPath(self, ("attr", attr_key))

    def array_index(self, index) -> "ObjectPath":
        return ObjectPath(self, ("index", int(index)))

    def missing_array_element(self, index) -> "ObjectPath":
        return ObjectPath(self, ("missing_index", int(index)))

    def map_value(self, key) -> "ObjectPath":
        return ObjectPath(self, ("map", key))

    def missing_map_entry(self) -> "ObjectPath":
        return ObjectPath(self, ("missing_map",))

    def _steps(self) -> list:
        out, node = [], self
        while node is not None:
            out.append(node.step)
            node = node.parent
        return out[::-1]

    def __len__(self):
        return len(self._steps())

    def get_prefix(self, length) -> "ObjectPath":
        node = self
        for _ in range(len(self) - length):
            node = node.parent
        return node

    def is_prefix_of(self, other) -> bool:
        return len(self) <= len(other) and other.get_prefix(len(self)) == self

    def __eq__(self, other):
        if not isinstance(other, ObjectPath):
            return NotImplemented
        mine, theirs = self._steps(), other._steps()
        return len(mine) == len(theirs) and all(_step_equal(a, b) for a, b in zip(mine, theirs, strict=True))

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(tuple(s[0] for s in self._steps()))

    def __str__(self):
        text = ""
        for step in self._steps():
            kind = step[0]
            if kind == "root":
                text += step[1] or "<root>"
            elif kind == "attr":
                text += f".{step[1]}"
            elif kind == "index":
                text += f"[{step[1]}]"
            elif kind == "missing_index":
                text += f"[<missing element #{step[1]}>]"
            elif kind == "map":
                text += f"[{getattr(step[1], 'name_hint', step[1])!r}]"
            else:
                text += "[<missing entry>]"
        return text

    __repr__ = __str__


def _step_equal(a, b) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] == "map":
        x, y = a[1], b[1]
        return x is y if hasattr(x, "__dataclass_fields__") else x == y
    if a[0] == "root":
        return True
    return a == b
