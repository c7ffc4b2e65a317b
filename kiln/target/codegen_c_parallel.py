"""Parallel loops in the C backend: outlining a loop body into a task function run by the runtime helper's thread
pool (a mixin of :class:`kiln.target.codegen_c.CSourceGenerator`), as the LLVM backend does.

``for i in T.parallel(lo, lo + n): body`` inside function ``f`` becomes::

    struct f_closure_1 { int64_t lo; int64_t n; float* A; int32_t m; ... };   // every variable body uses
    static int32_t f_parallel_1(int32_t task, int32_t num_tasks, void* closure) {
      struct f_closure_1* c = closure;  float* restrict A = c->A; ...
      for (i = c->lo + task * chunk; i < min(...); ++i) body      // chunk = ceil(n / num_tasks)
      return 0;
    }
    ...
    { struct f_closure_1 closure = {lo, n, A, m}; int32_t status = kiln_parallel_launch(f_parallel_1, &closure, T);
      if (status != 0) return status; }

A failed assertion inside the body returns -1 from the task, which the launcher hands back (with the task's
message). ``T`` is the target's ``-num-cores`` (0: the whole pool). The task functions are printed before the
functions that launch them.
"""

from ..tir.analysis import stmt_contains, undefined_vars
from ..tir.expr import Call

__all__ = ["ParallelOutliner"]


def returns_a_value(stmt) -> bool:
    """Whether ``stmt`` returns a value from the function (``tir.ret``), which a task function cannot do for it."""
    return stmt_contains(stmt, lambda n: isinstance(n, Call) and n.op.name == "tir.ret")


class ParallelOutliner:
    """``outline_parallel_for``; the generator keeps ``self.task_functions`` (printed before ``self.functions``)."""

    def _num_threads(self) -> int:
        target = self.target
        if target is not None and any(k == "num-cores" for k, _ in target.options):
            return int(target.num_cores)
        return 0

    def _captured_declaration(self, var) -> tuple:
        """``(field declaration, local declaration)`` of a variable the task reads from its closure."""
        name = self.names.get(var)
        elem = self.ptr_types.get(id(var))
        if elem is not None:
            return f"{elem}* {name};", f"{elem}* {self._restrict()}{name} = kiln_closure->{name};"
        ctype = "void*" if var.dtype == "handle" else self.ctype(var.dtype)
        return f"{ctype} {name};", f"{ctype} {name} = kiln_closure->{name};"

    def outline_parallel_for(self, loop, var, ctype, lo, extent):
        """Print ``loop`` (its variable's C name and type, its bounds as C expressions) as a task function and a
        launch."""
        self._parallel_count += 1
        task = f"{self.symbol}_parallel_{self._parallel_count}"
        struct = f"{self.symbol}_closure_{self._parallel_count}"
        captured = list(undefined_vars(loop.body, defs=[loop.loop_var]))
        fields, locals_ = zip(*(self._captured_declaration(v) for v in captured), strict=True) if captured else ((), ())

        outer_lines, outer_indent = self.lines, self.indent
        self.lines, self.indent = [], 1
        self.emit(f"struct {struct}* kiln_closure = (struct {struct}*)kiln_closure_raw;")
        for line in locals_:
            self.emit(line)
        self.emit("int64_t kiln_chunk = (kiln_closure->kiln_n + kiln_num_tasks - 1) / kiln_num_tasks;")
        self.emit("int64_t kiln_begin = kiln_closure->kiln_lo + kiln_task * kiln_chunk;")
        self.emit("int64_t kiln_stop = kiln_closure->kiln_lo + kiln_closure->kiln_n;")
        self.emit("int64_t kiln_end = kiln_begin + kiln_chunk < kiln_stop ? kiln_begin + kiln_chunk : kiln_stop;")
        self.emit(f"for ({ctype} {var} = ({ctype})kiln_begin; {var} < ({ctype})kiln_end; ++{var}) {{")
        self._body(loop.body)
        self.emit("return 0;")
        body = self.lines
        self.lines, self.indent = outer_lines, outer_indent

        field_lines = "".join(f"  {f}\n" for f in fields)
        self.task_functions.append(
            f"struct {struct} {{\n  int64_t kiln_lo;\n  int64_t kiln_n;\n{field_lines}}};\n"
            f"{self.function_attributes(loop.body)}static int32_t {task}(int32_t kiln_task, int32_t kiln_num_tasks, "
            f"void* kiln_closure_raw) {{\n"
            + "\n".join(body) + "\n}\n")
        values = ", ".join([f"(int64_t)({lo})", f"(int64_t)({extent})", *(self.names.get(v) for v in captured)])
        self.emit("{")
        self.indent += 1
        self.emit(f"struct {struct} kiln_closure_{self._parallel_count} = {{{values}}};")
        self.emit(f"int32_t kiln_status = kiln_parallel_launch({task}, &kiln_closure_{self._parallel_count}, "
                  f"{self._num_threads()});")
        self.emit("if (kiln_status != 0) return kiln_status;")
        self.indent -= 1
        self.emit("}")

