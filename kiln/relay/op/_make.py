"""``relay.op._make``: TVM's namespace of the operators' C++ constructors (``_make.concatenate(data, axis)``), here
answered by each operator's Python builder of the same name. Only builders whose arguments come in the same order
as TVM's constructor are listed: a script calling another one gets an AttributeError naming it."""

from . import annotation, tensor

# name -> builder; each takes TVM's ``Make<Op>`` arguments in TVM's order
_MAKERS = {
    "concatenate": tensor.concatenate,
    "compiler_begin": annotation.compiler_begin,
    "compiler_end": annotation.compiler_end,
}


def __getattr__(name):
    try:
        return _MAKERS[name]
    except KeyError:
        raise AttributeError(f"relay.op._make has no constructor {name!r}; kiln offers {sorted(_MAKERS)}") from None
