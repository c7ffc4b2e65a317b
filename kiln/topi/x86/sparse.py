"""The x86 schedule of ``topi.nn.sparse_dense`` (TVM's ``topi.x86.schedule_sparse_dense``): the default schedule
(element-wise consumers such as a relu inlined into the output) with the output's outer loop run in parallel."""

from ..generic import default_schedule

__all__ = ["schedule_sparse_dense"]


def schedule_sparse_dense(outs, target=None):
    """Schedule the sparse dense product of ``outs``: rows of the output in parallel."""
    outs = list(outs) if isinstance(outs, list | tuple) else [outs]
    s = default_schedule(outs)
    for out in outs:
        s[out.op].parallel(s[out.op].op.axis[0])
    return s
