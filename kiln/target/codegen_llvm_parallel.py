"""Parallel loops in the LLVM backend: outlining a loop body into a task function run by the runtime's launcher
(a mixin of :class:`kiln.target.codegen_llvm.LLVMGenerator`).

``for i in T.parallel(lo, lo + n): body`` becomes, in the enclosing function::

    closure = {lo, n, v1, v2, ...}                 // every variable body uses, stored in an entry-block alloca
    status = kiln_parallel_launch(task_fn, &closure, num_threads)
    if (status != 0) return status;

and a new internal function ``task_fn(task, num_tasks, closure)`` loads the variables back and runs the static chunk
``[lo + task * c, min(lo + (task + 1) * c, lo + n))`` with ``c = ceil(n / num_tasks)``, returning 0 (or -1 from a
failed assertion inside). ``kiln_parallel_launch`` (the runtime helper, :mod:`kiln.target.runtime_helper`) chooses
the task count and runs the tasks on the process's thread pool, on at most ``num_threads`` threads (the target's
``-num-cores``; 0 when it is not given: the whole pool). A parallel loop nested in another runs its inner launch
inline, on the thread running the outer task.
"""

import llvmlite.ir as ir

from ..tir.analysis import undefined_vars
from . import llvm_types as T

TASK_FN_TYPE = ir.FunctionType(T.I32, [T.I32, T.I32, T.I8P])


class ParallelOutliner:
    """``outline_parallel_for``."""

    def _num_threads(self) -> int:
        target = self.target
        if target is not None and any(k == "num-cores" for k, _ in target.options):
            return int(target.num_cores)
        return 0

    def outline_parallel_for(self, loop):
        state = self.state
        b = self.builder
        lo = self.visit_expr(loop.min)
        extent = self.visit_expr(loop.extent)
        captured = [v for v in undefined_vars(loop.body, defs=[loop.loop_var]) if id(v) in state.env]
        values = [state.env[id(v)] for v in captured]
        closure_ty = ir.LiteralStructType([lo.type, extent.type, *(v.type for v in values)])
        closure = self.alloca(closure_ty, align=8)
        for k, value in enumerate([lo, extent, *values]):
            b.store(value, b.gep(closure, [T.constant("int32", 0), T.constant("int32", k)]))

        self._parallel_count += 1
        task_fn = ir.Function(self.module, TASK_FN_TYPE, name=f"{state.function.name}_parallel_{self._parallel_count}")
        task_fn.linkage = "internal"
        self._emit_task(task_fn, loop, closure_ty, captured)

        launch = self.declare("kiln_parallel_launch", T.I32, [TASK_FN_TYPE.as_pointer(), T.I8P, T.I32])
        status = b.call(launch, [task_fn, b.bitcast(closure, T.I8P), T.constant("int32", self._num_threads())])
        fail = state.function.append_basic_block("parallel_fail")
        done = state.function.append_basic_block("parallel_done")
        b.cbranch(b.icmp_signed("!=", status, T.constant("int32", 0)), fail, done)
        b.position_at_end(fail)
        b.ret(status)
        b.position_at_end(done)

    def _emit_task(self, task_fn, loop, closure_ty, captured):
        from .codegen_llvm import _FunctionState

        outer = self.state
        state = self.state = _FunctionState(task_fn)
        try:
            task, num_tasks, closure_raw = task_fn.args
            task.name, num_tasks.name, closure_raw.name = "task_id", "num_tasks", "closure"
            closure_raw.add_attribute("noalias")
            b = state.builder
            closure = b.bitcast(closure_raw, closure_ty.as_pointer())
            fields = [b.load(b.gep(closure, [T.constant("int32", 0), T.constant("int32", k)]))
                      for k in range(len(closure_ty.elements))]
            lo, extent = fields[0], fields[1]
            for var, value in zip(captured, fields[2:], strict=True):
                self.bind(var, value)
            ty = lo.type
            task_i = b.sext(task, ty) if ty.width > 32 else task
            tasks_i = b.sext(num_tasks, ty) if ty.width > 32 else num_tasks
            one = ir.Constant(ty, 1)
            chunk = b.sdiv(b.sub(b.add(extent, tasks_i), one), tasks_i)
            begin = b.add(lo, b.mul(task_i, chunk))
            stop = b.add(lo, extent)
            end_candidate = b.add(begin, chunk)
            end = b.select(b.icmp_signed("<", end_candidate, stop), end_candidate, stop)
            self.emit_loop(loop.loop_var, begin, end, lambda: self.visit_stmt(loop.body))
            if not b.block.is_terminated:
                b.ret(T.constant("int32", 0))
            state.finish()
        finally:
            self.state = outer
