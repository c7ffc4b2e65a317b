"""A function of a VM executable: its name, parameters, bytecode and the types its arguments must have.

Parameter types are plain nested tuples, so they serialize as JSON and need nothing from the IR layers:

* ``("tensor", shape, dtype)``: a tensor; ``shape`` is a tuple of ints, ``None`` for a dimension known only at run
  time (Relay's ``Any``: the VM checks the rank and the static dimensions);
* ``("tuple", (field_type, ...))``: a tuple (an ADT of tag 0);
* ``("object",)``: a function value: a closure the same executable made;
* ``("adt",)``: a value of an algebraic data type (an ADT with its constructor's tag).
"""

from dataclasses import dataclass

__all__ = ["VMFunction", "TENSOR", "TUPLE", "OBJECT", "DATA", "describe_type"]

TENSOR, TUPLE, OBJECT, DATA = "tensor", "tuple", "object", "adt"


@dataclass(frozen=True, slots=True)
class VMFunction:
    """One function of an executable (TVM's ``VMFunction``).

    Parameters
    ----------
    name : str
        Its global name (``"main"``).
    params : tuple of str
        The parameter names; argument ``i`` arrives in register ``i``.
    instructions : tuple of Instruction
        The bytecode.
    register_file_size : int
        How many registers an activation has.
    param_types : tuple
        One type description per parameter (see the module docstring).
    """

    name: str
    params: tuple
    instructions: tuple
    register_file_size: int
    param_types: tuple

    def __str__(self):
        lines = [f"VM Function[{self.name}]({', '.join(self.params)}) registers={self.register_file_size}"]
        width = len(str(len(self.instructions)))
        # each instruction in kiln's form, then as TVM prints it (tools and tests search the bytecode for TVM's names)
        lines.extend(f"  {pc:>{width}}: {instr}  # {instr.tvm_text()}" for pc, instr in enumerate(self.instructions))
        return "\n".join(lines)


def describe_type(ptype) -> str:
    """A parameter type description as text: ``Tensor[(1, ?), float32]``, ``(t1, t2)``, ``object``."""
    kind = ptype[0]
    if kind == TENSOR:
        dims = ", ".join("?" if d is None else str(d) for d in ptype[1])
        return f"Tensor[({dims}), {ptype[2]}]" if ptype[1] else ptype[2]
    if kind == TUPLE:
        return "(" + ", ".join(describe_type(f) for f in ptype[1]) + ")"
    return "a data type value" if kind == DATA else "object"
