"""Relay operators. Element-wise, shape and reduction builders live here (``relay.add``, ``relay.reshape``...);
``relay.nn`` and ``relay.image`` hold the rest. ``OpPattern`` is the fusion pattern enum."""

from ...ir.op import Op as _Op
from . import (
    algorithm,
    annotation,
    array,
    array_more,
    attrs,
    device,
    dyn,
    elemwise,
    image,
    like,
    memory,
    nn,
    random,
    reduce,
    signal,
    sparse,
    tensor,
    transform,
    vision,
    vm,
)
from .algorithm import *  # noqa: F403
from .array import *  # noqa: F403
from .array_more import (
    contrib_reverse_reshape,
    debug,
    fixed_point_multiply,
    fixed_point_multiply_per_axis,
    invert_permutation,
    reverse_reshape,
    sparse_reshape,
    strided_set,
)
from .device import device_copy, on_device
from .elemwise import *  # noqa: F403
from .like import *  # noqa: F403
from .op import (
    OpPattern,
    builders,
    make_call,
    register_alter_op_layout,
    register_compute,
    register_convert_op_layout,
    register_fake_quantization_to_integer,
    register_gradient,
    register_infer_correct_layout,
    register_legalize,
    register_optional_fake_quantization_to_integer,
    register_pattern,
    register_relay_op,
    register_strategy,
)
from .reduce import *  # noqa: F403
from .signal import *  # noqa: F403
from .sparse import *  # noqa: F403
from .tensor import *  # noqa: F403
from .transform import *  # noqa: F403

# the operator builders each family module defines (kiln.relay.op.op.builders): nothing to list by hand
_FAMILIES = (tensor, reduce, transform, algorithm, array, array_more, like, elemwise, signal, sparse, device)
__all__ = [name for module in _FAMILIES for name in builders(vars(module))]
# logsumexp, std, segment_sum: made of other operators, as in TVM; reverse_reshape: TVM's other name of one
__all__ += reduce.COMPOSITES + array.COMPOSITES + ["reverse_reshape"]

get = _Op.get
"""``relay.op.get("nn.conv2d")``: the registered operator (TVM's name; tuning scripts pass it to
``autotvm.task.extract_from_program(..., ops=...)``)."""

# the strategies register every operator's compute, schedule and strategy (and the x86 layout hook); the
# _tensor_grad modules every operator's gradient (FPrimalGradient)
from . import _make, _tensor_grad, _tensor_grad_nn, _tensor_grad_transform, contrib, strategy  # noqa: E402,F401
