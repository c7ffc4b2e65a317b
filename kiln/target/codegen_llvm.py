"""LLVM code generation: ``LLVMGenerator`` walks lowered TIR with an llvmlite ``IRBuilder``.

Expressions map through tables (``int_ops``/``float_ops``: TIR node -> builder method; intrinsics ->
:data:`kiln.target.llvm_types.LLVM_INTRINSICS`); vector dtypes are LLVM vector types, so ``Ramp``/``Broadcast`` code
from ``VectorizeLoop`` becomes ``<16 x float>`` arithmetic, and a load or store at ``Ramp(base, 1, n)`` is one vector
memory access whose alignment is derived from the modular set of ``base``. Float32 and float64 ``+ - *`` carry the
``contract`` flag so LLVM fuses multiply-adds into FMA instructions (what GCC does by default for C); float16 ones do
not, since float16 rounds after every operation (:mod:`kiln.tir.dtype_semantics`).

Statements become basic blocks: a loop is preheader -> header (a phi for the loop variable) -> body -> latch; an
``AssertStmt`` branches to the function's one error block, which records the message (a phi over the failing
checks; ``KilnAPISetLastError``) and returns -1. A pure expression is emitted once where the code after it can
reuse it (:mod:`kiln.target.codegen_llvm_values`). Local
allocations are ``alloca``s in the entry block (so SROA keeps small accumulators in registers); large or dynamic
ones go to the heap.

A parallel loop is outlined (:mod:`kiln.target.codegen_llvm_parallel`): its body becomes a function
``i32 f(i32 task, i32 num_tasks, i8* closure)`` that runs one static chunk of the iterations, the variables it uses
are stored in a closure struct, and the loop becomes a call to ``kiln_parallel_launch`` from the runtime helper.
"""

import llvmlite.ir as ir

from ..arith import Analyzer
from ..error import CodegenError
from ..tir import dtype as _dt
from ..tir import expr as E
from ..tir import stmt as S
from . import llvm_types as T
from .codegen_base import CodeGenBase
from .codegen_common import flat_offset, stack_elements, unit_ramp_base
from .codegen_llvm_calls import CallLowering
from .codegen_llvm_parallel import ParallelOutliner
from .codegen_llvm_values import EmittedValues, ValueReuse


class _FunctionState:
    """Where code is being emitted: the function, its builder, variable values, and an entry block that holds only
    allocas (code starts in the next block; :meth:`finish` links them), so allocas can be added at any time."""

    def __init__(self, function):
        self.function = function
        self.entry = function.append_basic_block("entry")
        self.builder = ir.IRBuilder(function.append_basic_block("start"))
        self.env: dict = {}  # id(var) -> llvm value
        self.keep: list = []
        self.values = EmittedValues()
        self.fail_message = None  # the phi of the error block (LLVMGenerator.fail_block), made on first use

    def finish(self):
        ir.IRBuilder(self.entry).branch(self.function.blocks[1])


class LLVMGenerator(ValueReuse, CodeGenBase, CallLowering, ParallelOutliner):
    """Builds one LLVM module from PrimFuncs.

    Examples
    --------
    >>> gen = LLVMGenerator(Target("llvm"))       # doctest: +SKIP
    >>> gen.add_function("addone", prim_func)     # doctest: +SKIP
    >>> text = str(gen.module)                    # doctest: +SKIP
    """

    backend = "LLVM codegen"
    int_ops = {E.Add: "add", E.Sub: "sub", E.Mul: "mul"}
    float_ops = {E.Add: "fadd", E.Sub: "fsub", E.Mul: "fmul", E.Div: "fdiv", E.Mod: "frem"}
    float_flags = ("contract",)
    cmp_ops = {E.EQ: "==", E.NE: "!=", E.LT: "<", E.LE: "<=", E.GT: ">", E.GE: ">="}

    def __init__(self, target=None, name="kiln"):
        self.target = target
        self.module = ir.Module(name=name)
        self.state = None
        self.analyzer = Analyzer()
        self._parallel_count = 0
        self._strings: dict = {}

    # ---- driver
    def add_function(self, symbol, func):
        """Generate ``func`` as the external function ``symbol``."""
        params = [T.llvm_type(p.dtype) for p in func.params]
        fn = ir.Function(self.module, ir.FunctionType(T.I32, params), name=symbol)
        self.noalias = bool(func.attrs.get("tir.noalias", False)) if func.attrs is not None else False
        state = self.state = _FunctionState(fn)
        for p, arg in zip(func.params, fn.args, strict=True):
            arg.name = p.name_hint
            self.bind(p, arg)
            if self.noalias and p.dtype == "handle":
                arg.add_attribute("noalias")
        for p in func.params:
            buf = func.buffer_map.get(p)
            if buf is not None and buf.data is not p and func.attrs.get("calling_conv", 0) != 1:
                self.bind(buf.data, state.env[id(p)])
        self.visit_stmt(func.body)
        if not state.builder.block.is_terminated:
            state.builder.ret(T.constant("int32", 0))
        state.finish()
        self.state = None

    # ---- helpers
    @property
    def builder(self):
        return self.state.builder

    def bind(self, var, value):
        state = self.state
        if id(var) in state.env:  # a loop or let variable bound again: emitted values that read it are stale
            state.values.forget_all()
        state.env[id(var)] = value
        state.keep.append(var)

    def lookup(self, var):
        value = self.state.env.get(id(var))
        if value is None:
            raise CodegenError(f"LLVM codegen: variable {var.name_hint} is used but not defined")
        return value

    def string_constant(self, text):
        """An ``i8*`` to a NUL-terminated global string (one global per distinct text)."""
        gv = self._strings.get(text)
        if gv is None:
            data = bytearray(text.encode()) + b"\0"
            ty = ir.ArrayType(T.I8, len(data))
            gv = ir.GlobalVariable(self.module, ty, name=f".str.{len(self._strings)}")
            gv.global_constant = True
            gv.linkage = "private"
            gv.initializer = ir.Constant(ty, data)
            self._strings[text] = gv
        return gv.bitcast(T.I8P)

    def declare(self, name, ret, args, var_arg=False):
        """The function ``name`` of the module, declared on first use."""
        fn = self.module.globals.get(name)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(ret, args, var_arg=var_arg), name=name)
        return fn

    def alloca(self, ty, count=None, align=64):
        """An ``alloca`` placed in the entry block (where SROA/mem2reg can promote it)."""
        ptr = ir.IRBuilder(self.state.entry).alloca(ty, size=count)
        ptr.align = align
        return ptr

    def element_pointer(self, buffer, dtype=None):
        """``buffer``'s data as a pointer to its memory element type."""
        ty = T.memory_type(buffer.dtype if dtype is None else dtype).as_pointer()
        return self.reuse(("pointer", id(buffer.data), str(ty)),
                          lambda: self.builder.bitcast(self.lookup(buffer.data), ty))

    # ---- expressions
    def visit_var(self, e):
        return self.lookup(e)

    def visit_int_imm(self, e):
        return T.constant(e.dtype, e.value)

    def visit_float_imm(self, e):
        return T.constant(e.dtype, e.value)

    def visit_string_imm(self, e):
        return self.string_constant(e.value)

    def visit_cast(self, e):
        return self.cast(self.visit_expr(e.value), e.value.dtype, e.dtype)

    def cast(self, value, src_dtype, dst_dtype):
        src, dst = _dt.DataType.parse(src_dtype), _dt.DataType.parse(dst_dtype)
        b = self.builder
        ty = T.llvm_type(dst_dtype)
        if src == dst:
            return value
        if src.is_handle():
            return b.ptrtoint(value, ty) if not dst.is_handle() else value
        if dst.is_handle():
            return b.inttoptr(value, ty)
        if dst.is_bool():
            if src.is_float():
                return b.fcmp_unordered("!=", value, ir.Constant(value.type, 0.0) if src.lanes == 1
                                        else T.splat(value.type, 0.0))
            zero = ir.Constant(value.type, 0) if src.lanes == 1 else T.splat(value.type, 0)
            return b.icmp_unsigned("!=", value, zero)
        if src.is_float() and dst.is_float():
            return b.fpext(value, ty) if dst.bits > src.bits else b.fptrunc(value, ty)
        if src.is_float():
            return b.fptosi(value, ty) if dst.is_int() else b.fptoui(value, ty)
        signed = src.is_int()
        if dst.is_float():
            return b.sitofp(value, ty) if signed else b.uitofp(value, ty)
        if dst.bits == src.bits:
            return value
        if dst.bits < src.bits:
            return b.trunc(value, ty)
        return b.sext(value, ty) if signed else b.zext(value, ty)

    def visit_binary(self, e):
        a, b = self.visit_expr(e.a), self.visit_expr(e.b)
        t = _dt.DataType.parse(e.a.dtype)
        kind = type(e)
        bld = self.builder
        if kind in self.cmp_ops:
            op = self.cmp_ops[kind]
            if t.is_float():
                return bld.fcmp_unordered(op, a, b) if kind is E.NE else bld.fcmp_ordered(op, a, b)
            return bld.icmp_signed(op, a, b) if t.is_int() else bld.icmp_unsigned(op, a, b)
        if kind in (E.Min, E.Max):
            op = "<" if kind is E.Min else ">"
            if t.is_float():
                cond = bld.fcmp_ordered(op, a, b)
            else:
                cond = bld.icmp_signed(op, a, b) if t.is_int() else bld.icmp_unsigned(op, a, b)
            return bld.select(cond, a, b)
        if t.is_float():
            if kind in (E.FloorDiv, E.FloorMod):
                q = self.call_intrinsic("llvm.floor", bld.fdiv(a, b))
                return q if kind is E.FloorDiv else bld.fsub(a, bld.fmul(q, b))
            method = getattr(bld, self.float_ops[kind])
            # float16 rounds after every operation (kiln.tir.dtype_semantics): no contraction into an FMA
            flags = self.float_flags if t.bits > 16 and kind in (E.Add, E.Sub, E.Mul) else ()
            return method(a, b, flags=flags)
        if t.is_bool() and kind in (E.Add, E.Mul):  # 1-bit values saturate (kiln.tir.dtype_semantics), i1 wraps
            return bld.or_(a, b) if kind is E.Add else bld.and_(a, b)
        if kind in self.int_ops:
            return getattr(bld, self.int_ops[kind])(a, b)
        signed = t.is_int()
        if kind is E.Div:
            return bld.sdiv(a, b) if signed else bld.udiv(a, b)
        if kind is E.Mod:
            return bld.srem(a, b) if signed else bld.urem(a, b)
        if not signed:
            return bld.udiv(a, b) if kind is E.FloorDiv else bld.urem(a, b)
        return self.floor_div_mod(kind, a, b)

    def floor_div_mod(self, kind, a, b):
        """Signed floor division/modulo from truncating ones: adjust when the remainder's sign differs from b's."""
        bld = self.builder
        zero = ir.Constant(a.type, 0) if not isinstance(a.type, ir.VectorType) else T.splat(a.type, 0)
        q, r = bld.sdiv(a, b), bld.srem(a, b)
        fix = bld.and_(bld.icmp_signed("!=", r, zero),
                       bld.xor(bld.icmp_signed("<", r, zero), bld.icmp_signed("<", b, zero)))
        if kind is E.FloorDiv:
            one = ir.Constant(a.type, 1) if not isinstance(a.type, ir.VectorType) else T.splat(a.type, 1)
            return bld.select(fix, bld.sub(q, one), q)
        return bld.select(fix, bld.add(r, b), r)

    def visit_logic(self, e):
        a, b = self.visit_expr(e.a), self.visit_expr(e.b)
        return self.builder.and_(a, b) if isinstance(e, E.And) else self.builder.or_(a, b)

    def visit_not(self, e):
        return self.builder.not_(self.visit_expr(e.a))

    def visit_select(self, e):
        c = self.visit_expr(e.condition)
        return self.builder.select(c, self.visit_expr(e.true_value), self.visit_expr(e.false_value))

    def broadcast(self, value, lanes):
        ty = ir.VectorType(value.type, lanes)
        b = self.builder
        if isinstance(value, ir.Constant):
            return ir.Constant(ty, [value] * lanes)
        vec = b.insert_element(ir.Constant(ty, ir.Undefined), value, T.constant("int32", 0))
        return b.shuffle_vector(vec, ir.Constant(ty, ir.Undefined), ir.Constant(ir.VectorType(T.I32, lanes),
                                                                               [0] * lanes))

    def visit_broadcast(self, e):
        return self.broadcast(self.visit_expr(e.value), e.lanes)

    def visit_ramp(self, e):
        base, stride = self.visit_expr(e.base), self.visit_expr(e.stride)
        ty = ir.VectorType(base.type, e.lanes)
        steps = ir.Constant(ty, [ir.Constant(base.type, k) for k in range(e.lanes)])
        return self.builder.add(self.broadcast(base, e.lanes), self.builder.mul(self.broadcast(stride, e.lanes), steps))

    def visit_let(self, e):
        self.bind(e.var, self.visit_expr(e.value))
        return self.visit_expr(e.body)

    def _vector_access(self, buffer, index, lanes, dtype):
        """The pointer and alignment of a contiguous vector access, or None when ``index`` is not contiguous."""
        base = unit_ramp_base(index)
        if base is None and _dt.lanes(index.dtype) == 1:
            base = index
        if base is None:
            return None

        def make():
            ptr = self.builder.gep(self.element_pointer(buffer), [self.visit_expr(base)])
            align = T.alignment_of(self.analyzer, base, lanes, buffer.dtype, buffer.data_alignment)
            return self.builder.bitcast(ptr, T.llvm_type(dtype).as_pointer()), align

        key = self.value_key(base)
        return make() if key is None else self.reuse(("vector", id(buffer.data), buffer.dtype, dtype, key), make)

    def element_address(self, buffer, index):
        """The address of ``buffer[index]`` (a scalar index), emitted once where the code sees it."""
        key = self.value_key(index)

        def make():
            return self.builder.gep(self.element_pointer(buffer), [self.visit_expr(index)])

        return make() if key is None else self.reuse(("address", id(buffer.data), buffer.dtype, key), make)

    def visit_buffer_load(self, e):
        index = flat_offset(e.buffer, e.indices)
        lanes = _dt.lanes(e.dtype)
        b = self.builder
        is_bool = _dt.is_bool(e.buffer.dtype)
        if lanes == 1 or is_bool:
            if lanes > 1:
                return self._gather(e.buffer, index, e.dtype)
            value = b.load(self.element_address(e.buffer, index), align=T.elem_bytes(e.dtype))
            return b.trunc(value, T.I1) if is_bool else value
        access = self._vector_access(e.buffer, index, lanes, e.dtype)
        if access is not None:
            return b.load(access[0], align=access[1])
        return self._gather(e.buffer, index, e.dtype)

    def _gather(self, buffer, index, dtype):
        b = self.builder
        idx = self.visit_expr(index)
        base = self.element_pointer(buffer)
        ty = T.llvm_type(dtype)
        vec = ir.Constant(ty, ir.Undefined)
        for k in range(ty.count):
            lane = b.extract_element(idx, T.constant("int32", k))
            value = b.load(b.gep(base, [lane]), align=T.elem_bytes(dtype))
            if _dt.is_bool(buffer.dtype):
                value = b.trunc(value, T.I1)
            vec = b.insert_element(vec, value, T.constant("int32", k))
        return vec

    # ---- statements
    def bind_let(self, s):
        self.bind(s.var, self.visit_expr(s.value))

    def emit_assert(self, s):
        b = self.builder
        cond = self.visit_expr(s.condition)
        ok = self.state.function.append_basic_block("assert_ok")
        b.cbranch(cond, ok, self.fail_block())
        self.state.fail_message.add_incoming(self.string_constant(self.assert_message(s)), b.block)
        b.position_at_end(ok)

    def fail_block(self):
        """The function's one block that records an error message (the phi ``state.fail_message``, one incoming
        value per failing check) and returns -1: a block per check made a packed function's prologue (dozens of
        checks) several times larger for LLVM."""
        state = self.state
        if state.fail_message is None:
            block = state.function.append_basic_block("fail")
            b = ir.IRBuilder(block)
            state.fail_message = b.phi(T.I8P, name="message")
            b.call(self.declare("KilnAPISetLastError", ir.VoidType(), [T.I8P]), [state.fail_message])
            b.ret(T.constant("int32", -1))
        return state.fail_message.parent

    def visit_for(self, s):
        if s.kind == S.ForKind.PARALLEL:
            self.outline_parallel_for(s)
            return
        lo = self.visit_expr(s.min)
        end = self.builder.add(lo, self.visit_expr(s.extent)) if not (
            isinstance(s.min, E.IntImm) and s.min.value == 0) else self.visit_expr(s.extent)
        self.emit_loop(s.loop_var, lo, end, lambda: self.visit_stmt(s.body))

    def emit_loop(self, loop_var, lo, end, body):
        """``for (v = lo; v < end; ++v) body()`` with the loop variable a phi in the header."""
        fn, b = self.state.function, self.builder
        pre = b.block
        header = fn.append_basic_block(f"for_{loop_var.name_hint}")
        body_block = fn.append_basic_block(f"for_{loop_var.name_hint}_body")
        exit_block = fn.append_basic_block(f"for_{loop_var.name_hint}_end")
        b.branch(header)
        b.position_at_end(header)
        phi = b.phi(lo.type, name=loop_var.name_hint)
        phi.add_incoming(lo, pre)
        b.cbranch(b.icmp_signed("<", phi, end), body_block, exit_block)
        b.position_at_end(body_block)
        self.bind(loop_var, phi)
        with self.nested_region():
            body()
        if not b.block.is_terminated:
            nxt = b.add(phi, ir.Constant(phi.type, 1), flags=("nsw",))
            phi.add_incoming(nxt, b.block)
            b.branch(header)
        b.position_at_end(exit_block)

    def visit_while(self, s):
        fn, b = self.state.function, self.builder
        header, body, done = (fn.append_basic_block(n) for n in ("while", "while_body", "while_end"))
        b.branch(header)
        b.position_at_end(header)
        b.cbranch(self.visit_expr(s.condition), body, done)
        b.position_at_end(body)
        with self.nested_region():
            self.visit_stmt(s.body)
        if not b.block.is_terminated:
            b.branch(header)
        b.position_at_end(done)

    def visit_if_then_else(self, s):
        fn, b = self.state.function, self.builder
        cond = self.visit_expr(s.condition)
        then_block = fn.append_basic_block("if_then")
        else_block = fn.append_basic_block("if_else") if s.else_case is not None else None
        done = fn.append_basic_block("if_end")
        b.cbranch(cond, then_block, else_block or done)
        for block, stmt in ((then_block, s.then_case), (else_block, s.else_case)):
            if block is None:
                continue
            b.position_at_end(block)
            with self.nested_region():
                self.visit_stmt(stmt)
            if not b.block.is_terminated:
                b.branch(done)
        b.position_at_end(done)

    def visit_buffer_store(self, s):
        index = flat_offset(s.buffer, s.indices)
        value = self.visit_expr(s.value)
        lanes = _dt.lanes(s.value.dtype)
        b = self.builder
        is_bool = _dt.is_bool(s.buffer.dtype)
        if lanes == 1:
            b.store(b.zext(value, T.I8) if is_bool else value, self.element_address(s.buffer, index),
                    align=T.elem_bytes(s.buffer.dtype))
            return
        access = None if is_bool else self._vector_access(s.buffer, index, lanes, s.value.dtype)
        if access is not None:
            b.store(value, access[0], align=access[1])
            return
        idx = self.visit_expr(index)
        base = self.element_pointer(s.buffer)
        for k in range(lanes):
            lane_value = b.extract_element(value, T.constant("int32", k))
            if is_bool:
                lane_value = b.zext(lane_value, T.I8)
            ptr = b.gep(base, [b.extract_element(idx, T.constant("int32", k))])
            b.store(lane_value, ptr, align=T.elem_bytes(s.buffer.dtype))

    def emit_allocate(self, s, on_heap):
        ty = T.memory_type(s.dtype)
        lanes = _dt.lanes(s.dtype)
        b = self.builder
        if not on_heap:
            ptr = self.alloca(ir.ArrayType(ty, stack_elements(s)))
            self.bind(s.buffer_var, b.bitcast(ptr, T.I8P))
            self.visit_stmt(s.body)
            return
        size = ir.Constant(T.I64, lanes * T.elem_bytes(s.dtype))
        for x in s.extents:
            size = b.mul(size, self.cast(self.visit_expr(x), x.dtype, "int64"))
        raw = b.call(self.declare("kiln_alloc", T.I8P, [T.I64]), [size])
        fn = self.state.function
        ok = fn.append_basic_block("alloc_ok")
        b.cbranch(b.icmp_unsigned("==", raw, ir.Constant(T.I8P, None)), self.fail_block(), ok)
        self.state.fail_message.add_incoming(
            self.string_constant(f"out of memory allocating {s.buffer_var.name_hint}"), b.block)
        b.position_at_end(ok)
        self.bind(s.buffer_var, raw)
        self.visit_stmt(s.body)
        if not b.block.is_terminated:
            b.call(self.declare("kiln_free", ir.VoidType(), [T.I8P]), [raw])

    def visit_evaluate(self, s):
        if isinstance(s.value, E.IntImm | E.FloatImm):
            return
        if isinstance(s.value, E.Call) and s.value.op.name == "tir.ret":
            value = self.visit_expr(s.value.args[0])
            self.builder.ret(self.cast(value, s.value.args[0].dtype, "int32"))
            self.builder.position_at_end(self.state.function.append_basic_block("after_ret"))
            return
        self.visit_expr(s.value)
