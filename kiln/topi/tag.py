"""Tags of topi operations (TVM's ``topi.tag``): what kind of computation a ``te.compute`` is.

Schedules read tags, never op names: an anchor schedule (conv2d, dense, softmax ...) walks the group's outputs back
to its own operation and inlines every stage tagged injective on the way (:func:`kiln.topi.utils.traverse_inline`).
So every compute that is a pure function of its index (element-wise, broadcast, shape and data movement) carries
one of ``elemwise``, ``broadcast`` or ``injective`` (optionally followed by ``,<detail>``), and an operation with
a reduction carries a tag naming it (``comm_reduce``, ``conv2d_NCHWc``, ``dense_pack`` ...).
"""

ELEMWISE = "elemwise"
BROADCAST = "broadcast"
INJECTIVE = "injective"
COMM_REDUCE = "comm_reduce"
COMM_REDUCE_IDX = "comm_reduce_idx"

_INJECTIVE_KINDS = (ELEMWISE, BROADCAST, INJECTIVE)


def _kind(tag: str) -> str:
    return tag.split(",", 1)[0]


def is_broadcast(tag: str) -> bool:
    """Whether ``tag`` marks an element-wise or broadcast computation."""
    return _kind(tag) in (ELEMWISE, BROADCAST)


def is_injective(tag: str) -> bool:
    """Whether ``tag`` marks an injective computation (each output element a function of input elements, no
    reduction): such stages can always be inlined into their consumers."""
    return _kind(tag) in _INJECTIVE_KINDS
