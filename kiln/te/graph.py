"""Graph queries over tensor expressions and schedules (TVM's ``te/schedule/graph.cc``, exposed as
``te.schedule.CreateReadGraph``, ``PostDFSOrder``, ``CreateAttachPath``, ``ScanGetBody``, ``ScanFixPointAnalysis``).

The scan fix-point analysis decides, for each spatial axis of a scan's state, whether step ``t`` of the state at
index ``i`` depends only on index ``i`` of earlier steps (then the scan can be split along that axis, e.g. bound to
threads). It propagates "dimension ``k`` of tensor X is exactly the spatial axis s" backwards from the placeholders
through the body (an index that is exactly an output axis variable carries it over; any other use of a dimension
marks its axis as failed), then checks by a reach search that the update's dimension reaches no other placeholder
dimension.
"""

from ..error import InvalidIRError
from ..runtime.container import Map
from ..tir import expr as E
from ..tir.stmt_functor import post_order_visit
from .scan import ScanOp
from .schedule import _post_dfs
from .tensor import ComputeOp

__all__ = ["CreateReadGraph", "PostDFSOrder", "CreateAttachPath", "ScanGetBody", "ScanFixPointAnalysis",
           "get_subgraph"]


def CreateReadGraph(roots):  # noqa: N802  (TVM's name)
    """Operation -> the tensors it reads, for every operation reachable from ``roots``."""
    graph = Map()
    stack = list(roots)
    seen = {id(op) for op in stack}
    while stack:
        op = stack.pop()
        deps = list(op.input_tensors)
        graph[op] = deps
        for t in deps:
            if id(t.op) not in seen:
                seen.add(id(t.op))
                stack.append(t.op)
    return graph


def PostDFSOrder(roots, graph):  # noqa: N802
    """The operations of a read graph, every operation after the ones it reads."""
    return _post_dfs(roots, lambda op: graph.get(op, ()) or ())


def CreateAttachPath(sch):  # noqa: N802
    """Operation -> the loops enclosing its stage, innermost first (through ``compute_at`` and scan bodies)."""
    out = Map()
    for stage in sch.stages:
        path, seen, s = [], set(), stage
        while True:
            if id(s) in seen:
                raise InvalidIRError(f"CreateAttachPath: compute_at forms a cycle through stage {s.op.name}")
            seen.add(id(s))
            spec = s.attach_spec()
            if spec.attach_type == "scope":
                ivar, s, started = spec.attach_ivar, spec.attach_stage, False
            elif spec.attach_type == "scan_update":
                ivar, s, started = None, spec.attach_stage, True
            else:
                break
            for iv in reversed(s.leaf_iter_vars):
                started = started or iv is ivar
                if started:
                    path.append(iv)
            if not started:
                raise InvalidIRError(f"CreateAttachPath: stage {stage.op.name} is attached at a loop stage {s.op.name} "
                                 "no longer has")
        if stage.op not in out:
            out[stage.op] = path
    return out


def get_subgraph(outputs, inputs, include_inputs=False) -> list:
    """The operations between ``inputs`` and ``outputs`` (those from which an input is reachable), producers first;
    the inputs' operations themselves only with ``include_inputs``."""
    boundary = {id(t.op) for t in inputs}
    reach: dict = {}
    result: list = []
    for root in [t.op for t in outputs]:
        stack = [(root, False)]
        while stack:
            op, ready = stack.pop()
            if ready:
                reach[id(op)] = hit = any(reach.get(id(t.op), False) for t in op.input_tensors)
                if hit:
                    result.append(op)
                continue
            if id(op) in reach:
                continue
            if id(op) in boundary:
                reach[id(op)] = True
                if include_inputs:
                    result.append(op)
                continue
            reach[id(op)] = False  # being visited: a cycle (none in a DAG) does not reach
            stack.append((op, True))
            for t in reversed(op.input_tensors):
                if id(t.op) not in reach:
                    stack.append((t.op, False))
    return result


def ScanGetBody(scan_op):  # noqa: N802
    """The operations of a scan's body: between its placeholders (and ``inputs``) and its updates."""
    return get_subgraph(scan_op.update, [*scan_op.state_placeholder, *scan_op.inputs], False)


def _key(tensor, dim):
    return (id(tensor.op), tensor.value_index, dim)


def _loads(op):
    found = []
    for b in op.body:
        post_order_visit(b, lambda n: found.append(n) if isinstance(n, E.ProducerLoad) else None)
    return found


def _reach_graph(ops) -> dict:
    """Tensor dimension -> the tensor dimensions its index expressions read (within ``ops``)."""
    inside = {id(op) for op in ops}
    reach: dict = {}
    for op in ops:
        if isinstance(op, ScanOp):
            for i, u in enumerate(op.update):
                for k in range(1, len(u.shape)):
                    reach.setdefault(_key(op.output(i), k), []).extend([_key(u, k), _key(op.init[i], k)])
        elif isinstance(op, ComputeOp):
            t = op.output(0)
            axis_key = {id(iv.var): _key(t, d) for d, iv in enumerate(op.axis)}
            for key in axis_key.values():
                reach[key] = []
            for load in _loads(op):
                if id(load.producer.op) not in inside:
                    continue
                for d, index in enumerate(load.indices):
                    used: list = []
                    post_order_visit(index, lambda n, out=used: out.append(n) if isinstance(n, E.Var) else None)
                    for v in used:
                        if id(v) in axis_key:
                            reach[axis_key[id(v)]].append(_key(load.producer, d))
    return reach


def ScanFixPointAnalysis(scan_op):  # noqa: N802
    """Spatial axis -> 1 when the scan's state along it depends only on the same index of earlier steps, else 0
    (see the module docstring)."""
    body = ScanGetBody(scan_op)
    exact: dict = {}
    failed: set = set()
    sp = 0
    for i, u in enumerate(scan_op.update):
        for k in range(1, len(u.shape)):
            exact[_key(scan_op.state_placeholder[i], k)] = id(scan_op.spatial_axis_[sp])
            sp += 1

    def merge(dst, src):
        if src not in exact:
            return
        if dst not in exact:
            exact[dst] = exact[src]
        elif exact[dst] != exact[src]:
            failed.update((exact[dst], exact[src]))

    for op in body:
        if isinstance(op, ScanOp):
            for i, u in enumerate(op.update):
                for k in range(1, len(u.shape)):
                    merge(_key(op.output(i), k), _key(u, k))
                    merge(_key(op.output(i), k), _key(op.init[i], k))
        elif isinstance(op, ComputeOp):
            axis_keys = {id(iv.var): [_key(op.output(j), d) for j in range(op.num_outputs)]
                         for d, iv in enumerate(op.axis)}
            for load in _loads(op):
                for d, index in enumerate(load.indices):
                    src = _key(load.producer, d)
                    keys = axis_keys.get(id(index)) if isinstance(index, E.Var) else None
                    if keys is not None:
                        for key in keys:
                            merge(key, src)
                    elif src in exact:
                        failed.add(exact[src])
    placeholder_dims = {_key(t, k) for t in scan_op.state_placeholder for k in range(len(t.shape))}
    reach = None
    out = Map()
    sp = 0
    for i, u in enumerate(scan_op.update):
        for k in range(1, len(u.shape)):
            key, target, iv = _key(u, k), _key(scan_op.state_placeholder[i], k), scan_op.spatial_axis_[sp]
            sp += 1
            if id(iv) in failed or exact.get(key) != id(iv):
                out[iv] = E.IntImm("int32", 0)
                continue
            reach = reach if reach is not None else _reach_graph(body)
            seen, stack, clean = {key}, [key], True
            while stack:
                cur = stack.pop()
                if cur != target and cur in placeholder_dims:
                    clean = False
                    break
                for nxt in reach.get(cur, ()):
                    if nxt not in seen:
                        seen.add(nxt)
                        stack.append(nxt)
            out[iv] = E.IntImm("int32", 1 if clean else 0)
    return out
