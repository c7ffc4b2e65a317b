"""The Relay text printer (TVM's RelayTextPrinter), registered as the global function ``relay.ir.astext``.

Output is TVM's graph normal form::

    #[version = "0.0.5"]
    def @main(%x: Tensor[(1, 3, 8, 8), float32]) -> Tensor[(1, 8, 8, 8), float32] {
      %0 = nn.conv2d(%x, meta[relay.Constant][0], padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3]);
      nn.relu(%0)
    }

Vars, constants, global vars and operators always print inline. Every other node (call, tuple, projection, closure,
``if``, non-tail ``let``) is bound once to a temporary ``%n``, numbered in post order, except the last expression of
a scope (and a let's value) when it has a single use, which prints inline as TVM does.

How it works
------------
A *scope* is a block of text ending in one expression: a function body, an ``if`` branch, or a parenthesised ``let``
chain. Printing one top-level function runs three steps, all iterative over the dataflow graph:

1. Collect the non-atomic nodes in post order and count their uses (parent edges).
2. In reverse post order (users before what they use), give each node a *home* scope: the lowest common ancestor of
   the scopes its users print in. A node shared by both branches of an ``if`` is therefore bound before the ``if``,
   and one used only inside a closure is bound inside it, so the text re-parses to the same graph.
3. Render each scope: before each anchor (let value, final expression) walk its dependencies in post order and bind
   the nodes whose home is this scope. Rendering a closure or ``if`` renders its scopes (recursion only over scope
   nesting, never over a chain of operators or lets).

Constants that are not simple scalars print as ``meta[relay.Constant][i]``; the metadata section at the end holds
them as :func:`kiln.ir.save_json` of ``{"relay.Constant": [...]}``, so the parser recovers the data exactly.
"""

from ..error import InternalError
from ..ir.adt import Constructor
from ..ir.attrs import DictAttrs
from ..ir.expr import GlobalVar
from ..ir.json import save_json
from ..ir.module import IRModule
from ..ir.op import Op
from ..runtime.packed_func import register_func
from .adt import Match
from .analysis.match_exhaustion import pattern_text
from .expr import Call, Constant, If, Let, RefCreate, RefRead, RefWrite, Tuple, TupleGetItem, Var
from .function import Function
from .printer_parts import (
    ATOMIC,
    TYPED_KINDS,
    Scope,
    binders,
    kids,
    lca,
    tir_function_text,
    tir_module_text,
    type_data_text,
    type_params_text,
    var_kids,
)
from .text_literals import (
    BARE_GLOBAL,
    VERSION,
    attr_text,
    index_prefixes,
    is_inline_scalar,
    local_name_candidate,
    scalar_text,
    string_text,
    type_text,
)


class RelayTextPrinter:
    """Prints modules and expressions; one instance per ``astext`` call (names are unique across its output)."""

    def __init__(self, show_meta_data=True, annotate=None):
        self.show_meta_data = show_meta_data
        self.annotate = annotate  # node -> str: the comment printed after an expression, in place of its type
        self.meta: dict[str, list] = {}
        self.meta_index: dict[int, str] = {}
        self.used_names: set[str] = set()
        self.name_counter: dict[str, int] = {}
        self.index_prefixes: set[str] = set()
        self.var_names: dict = {}
        self._reset_unit()

    def _reset_unit(self):
        self.temp_of: dict = {}
        self.counter = 0
        self.home: dict = {}
        self.inline: set = set()
        self.child_scopes: dict = {}
        self.typed = False

    # ------------------------------------------------------------------------------------------------ entry points
    def print_module(self, mod: IRModule) -> str:
        """The module text: version header, each function (``@main`` first, then by name), metadata.

        A module of PrimFuncs only (what ``kiln.lower`` returns) prints in TVMScript's ``@I.ir_module`` form.
        """
        gvs = sorted(mod.functions, key=lambda gv: (gv.name_hint != "main", gv.name_hint))
        if gvs and not mod.type_definitions and not any(isinstance(f, Function) for f in mod.functions.values()):
            return tir_module_text([mod.functions[gv] for gv in gvs])
        lines = [f'#[version = "{VERSION}"]']
        for data in mod.type_definitions.values():  # before the functions, which use their constructors
            lines.extend(type_data_text(data))
            lines.append("")
        for i, gv in enumerate(gvs):
            if i:
                lines.append("")
            func = mod.functions[gv]
            if isinstance(func, Function):
                lines.extend(self._print_def(gv, func))
            else:  # a PrimFunc after lowering: printed for reading, not for parsing back
                lines.append(f"{self._global_text(gv)} = {tir_function_text(func)}")
        if len(mod.attrs):
            self._meta_ref(mod.attrs, "attributes")
        return "\n".join(lines) + "\n" + self._meta_section()

    def print_expr(self, expr) -> str:
        """An expression: ``free_var`` lines for its free variables, then its graph-normal-form text."""
        self._reset_unit()
        self.typed = getattr(expr, "checked_type_", None) is not None and not isinstance(expr, Constant)
        top = Scope(None)
        lines = self._print_unit(expr, top, "")
        text = "\n".join(lines)
        meta = self._meta_section()
        return text + "\n" + meta if meta else text

    def _meta_section(self) -> str:
        if not self.meta:
            return ""
        if not self.show_meta_data:
            return ("\n/* meta data section omitted: print with show_meta_data=True to read the text back "
                    "with relay.parse */\n")
        return "\n#[metadata]\n" + save_json(self.meta) + "\n"

    # ---------------------------------------------------------------------------------------------------- names
    def _unique(self, name: str) -> str:
        """TVM's GetUniqueName (``x``, ``x1``, ``x2``...), also avoiding names that read as another name's ``.0``."""
        candidate = name
        # digits appended to "x.0" would keep it readable as a projection of %x: separate them with "_"
        sep = "_" if index_prefixes(name) else ""
        while self._conflicts(candidate):
            count = self.name_counter.get(name, 0) + 1
            self.name_counter[name] = count
            candidate = f"{name}{sep}{count}"
        self.used_names.add(candidate)
        self.name_counter.setdefault(candidate, 0)
        self.index_prefixes.update(index_prefixes(candidate))
        return candidate

    def _conflicts(self, name) -> bool:
        if name in self.used_names or name in self.index_prefixes:
            return True
        return any(p in self.used_names for p in index_prefixes(name))

    def _alloc_var(self, var) -> str:
        name, bare = local_name_candidate(var.name_hint)
        name = self._unique(name)
        text = "%" + (name if bare else string_text(name))
        self.var_names[var] = text
        return text

    def _var_decl(self, var) -> str:
        text = self._alloc_var(var)
        if getattr(var, "virtual_device_", None) is not None:  # where PlanDevices put it
            text += " {virtual_device=" + attr_text(var.virtual_device_, self._meta_ref) + "}"
        if var.type_annotation is not None:
            text += ": " + type_text(var.type_annotation)
        return text

    def _global_text(self, gv) -> str:
        name = gv.name_hint
        return "@" + (name if BARE_GLOBAL.fullmatch(name) else string_text(name))

    # ------------------------------------------------------------------------------------------------ analysis
    def _print_def(self, gv, func) -> list:
        self._reset_unit()
        self.typed = func.checked_type_ is not None
        header = f"def {self._global_text(gv)}{type_params_text(func.type_params)}({self._params_text(func)})"
        if func.ret_type is not None:
            header += f" -> {type_text(func.ret_type)}"
        top = Scope(None)
        body = self._print_unit(func.body, top, "  ", skip_free=func.params)
        return [header + " {", *body, "}"]

    def _print_unit(self, root, top, indent, skip_free=()) -> list:
        """Analyse the graph under ``root`` (steps 1 and 2), then render it as scope ``top``."""
        order, uses, free = self._collect(root, skip_free)
        top.root = root
        designated = {root: top}
        self._assign_homes(order, uses, designated, top)
        lines = [f"{indent}free_var {self._var_decl(v)};" for v in free]
        lines.extend(self._render_scope(top, indent))
        return lines

    def _collect(self, root, skip_free):
        """Step 1: non-atomic nodes in post order, their use counts, and the free variables in order of use."""
        uses = {root: 1}
        order = []
        seen = set()
        used_vars: dict = {}
        bound = set(skip_free)
        if type(root) is Var:
            used_vars[root] = None
        stack = [(root, False)] if not isinstance(root, ATOMIC) else []
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if node in seen:
                continue
            seen.add(node)
            stack.append((node, True))
            children = kids(node)
            for kid in children:
                uses[kid] = uses.get(kid, 0) + 1
            for kid in reversed(children):
                if kid not in seen:
                    stack.append((kid, False))
            for v in var_kids(node):
                used_vars.setdefault(v, None)
            bound.update(binders(node))
        free = [v for v in used_vars if v not in bound]
        return order, uses, free

    def _assign_homes(self, order, uses, designated, top):
        """Step 2: the home scope of each node, the child scopes of closures, ``if``s and lets, and inlining."""
        acc = {order[-1]: top} if order else {}
        home, inline, child_scopes = self.home, self.inline, self.child_scopes
        for node in reversed(order):
            scope = acc[node]
            home[node] = scope
            root_of = designated.get(node)
            if root_of is not None and uses[node] == 1:
                inline.add(node)
            kind = type(node)
            if kind is If:
                t, f = Scope(scope), Scope(scope)
                child_scopes[node] = (t, f)
                for branch, sub in ((node.true_branch, t), (node.false_branch, f)):
                    sub.root = branch
                    if not isinstance(branch, ATOMIC):
                        designated[branch] = sub
                        acc[branch] = lca(acc.get(branch), sub)
                targets = (node.cond,)
            elif kind is Function:
                sub = Scope(scope)
                child_scopes[node] = (sub,)
                sub.root = node.body
                if not isinstance(node.body, ATOMIC):
                    designated[node.body] = sub
                    acc[node.body] = lca(acc.get(node.body), sub)
                targets = ()
            elif kind is Match:
                subs = tuple(Scope(scope) for _ in node.clauses)
                child_scopes[node] = subs
                for clause, sub in zip(node.clauses, subs, strict=True):
                    sub.root = clause.rhs
                    if not isinstance(clause.rhs, ATOMIC):
                        designated[clause.rhs] = sub
                        acc[clause.rhs] = lca(acc.get(clause.rhs), sub)
                targets = (node.data,)
            elif kind is Let:
                # a let chain continues in its scope when it is the tail there; otherwise it opens a ( ... ) scope
                chain = scope if (node in inline and root_of is not None and root_of.root is node) else Scope(scope)
                child_scopes[node] = (chain,)
                chain.lets.append(node)
                chain.root = node.body
                for part in (node.value, node.body):
                    if not isinstance(part, ATOMIC):
                        designated[part] = chain
                        acc[part] = lca(acc.get(part), chain)
                targets = ()
            else:
                targets = kids(node)
            for kid in targets:
                if not isinstance(kid, ATOMIC):
                    acc[kid] = lca(acc.get(kid), scope)

    # ----------------------------------------------------------------------------------------------- rendering
    def _render_scope(self, scope, indent) -> list:
        """Step 3: the lines of one scope, bindings first, then its let lines and its final expression."""
        lines: list = []
        visited: set = set()
        for let in scope.lets:
            # the variable is named first, as TVM does, so a recursive closure can refer to itself
            head = f"{indent}let {self._var_decl(let.var)} = "
            self._emit_deps(let.value, scope, indent, lines, visited)
            value = self._render_operand(let.value, scope, indent)
            lines.append(head + value[0])
            lines.extend(value[1:])
            lines[-1] += ";"
        self._emit_deps(scope.root, scope, indent, lines, visited)
        value = self._render_operand(scope.root, scope, indent)
        lines.append(indent + value[0])
        lines.extend(value[1:])
        return lines

    def _render_operand(self, node, scope, indent) -> list:
        """A let value or final expression: inline text if it prints inline, else a reference."""
        if node in self.inline and self.home.get(node) is scope:
            lines = self._render_expr(node, indent)
            lines[-1] += self._type_comment(node)
            return lines
        return [self._ref(node)]

    def _emit_deps(self, anchor, scope, indent, lines, visited):
        """Bind, in post order, every not yet bound node under ``anchor`` whose home is ``scope``."""
        if isinstance(anchor, ATOMIC):
            return
        temp_of, home, inline = self.temp_of, self.home, self.inline
        stack = [(anchor, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                if home[node] is scope and node not in inline:
                    self._emit(node, indent, lines)
                continue
            if node in visited or node in temp_of:
                continue
            visited.add(node)
            stack.append((node, True))
            for kid in reversed(kids(node)):
                if kid not in visited and kid not in temp_of:
                    stack.append((kid, False))

    def _emit(self, node, indent, lines):
        text = self._render_expr(node, indent)
        temp = f"%{self.counter}"
        self.counter += 1
        self.temp_of[node] = temp
        lines.append(f"{indent}{temp} = {text[0]}")
        lines.extend(text[1:])
        lines[-1] += self._type_comment(node) + ";"

    def _type_comment(self, node) -> str:
        if self.annotate is not None:
            note = self.annotate(node)
            return f" /* {note} */" if note else ""
        if isinstance(node, TYPED_KINDS) and node.checked_type_ is not None:
            return f" /* ty={type_text(node.checked_type_)} */"
        return ""

    def _render_expr(self, node, indent) -> list:
        """The text of a non-atomic node as lines; the first line carries no indentation."""
        kind = type(node)
        ref = self._ref
        if kind is Call:
            if type(node.op) is Constructor and not node.args:
                return [node.op.name_hint]  # a nullary constructor applied reads as its name, as TVM parses it
            parts = [ref(a) for a in node.args]
            parts.extend(self._call_attrs(node))
            return [f"{ref(node.op)}({', '.join(parts)})"]
        if kind is RefCreate:
            return [f"ref({ref(node.value)})"]
        if kind is RefRead:
            return [f"ref_read({ref(node.ref)})"]
        if kind is RefWrite:
            return [f"ref_write({ref(node.ref)}, {ref(node.value)})"]
        if kind is Tuple:
            inner = ", ".join(ref(f) for f in node.fields)
            return [f"({inner},)" if len(node.fields) == 1 else f"({inner})"]
        if kind is TupleGetItem:
            return [f"{ref(node.tuple_value)}.{node.index}"]
        inner_indent = indent + "  "
        if kind is Match:
            lines = [f"{'match' if node.complete else 'match?'} ({ref(node.data)}) {{"]
            for clause, sub in zip(node.clauses, self.child_scopes[node], strict=True):
                lines.append(f"{inner_indent}{self._pattern_text(clause.lhs)} => {{")
                lines.extend(self._render_scope(sub, inner_indent + "  "))
                lines.append(f"{inner_indent}}},")
            lines.append(indent + "}")
            return lines
        if kind is Function:
            header = f"fn {type_params_text(node.type_params)}({self._params_text(node)}) "
            if node.ret_type is not None:
                header += f"-> {type_text(node.ret_type)} "
            (body,) = self.child_scopes[node]
            return [header + "{", *self._render_scope(body, inner_indent), indent + "}"]
        if kind is If:
            t, f = self.child_scopes[node]
            return [f"if ({ref(node.cond)}) {{", *self._render_scope(t, inner_indent), indent + "} else {",
                    *self._render_scope(f, inner_indent), indent + "}"]
        if kind is Let:
            (chain,) = self.child_scopes[node]
            return ["(", *self._render_scope(chain, inner_indent), indent + ")"]
        raise InternalError(f"the text printer cannot print a {kind.__name__}")

    def _pattern_text(self, pattern) -> str:
        """A clause's pattern, declaring its variables (with their annotations)."""
        return pattern_text(pattern, self._var_decl)

    def _params_text(self, func) -> str:
        parts = [self._var_decl(p) for p in func.params]
        parts.extend(f"{k}={attr_text(v, self._meta_ref)}" for k, v in func.attrs.items())
        if getattr(func, "virtual_device_", None) is not None:
            parts.append(f"virtual_device={attr_text(func.virtual_device_, self._meta_ref)}")
        return ", ".join(parts)

    def _call_attrs(self, call) -> list:
        attrs = call.attrs
        if attrs is None:
            return []
        if isinstance(call.op, Op) and type(attrs) is call.op.get_attr("attrs_type"):
            return [f"{k}={attr_text(v, self._meta_ref)}" for k, v in attrs.non_default_items()]
        if not isinstance(call.op, Op) and not isinstance(attrs, DictAttrs):  # TVM's form for a function's call
            items = [f"{k}={attr_text(v, self._meta_ref)}" for k, v in attrs.non_default_items()]
            return [*items, f"attrs_type_key={string_text(attrs.type_key)}"]
        # attributes the operator does not declare can only be read back from the metadata (TVM does the same)
        return [self._meta_ref(attrs)]

    def _ref(self, node) -> str:
        """How an operand is spelled where it is used."""
        kind = type(node)
        if kind is Var:
            name = self.var_names.get(node)
            return name if name is not None else self._alloc_var(node)  # free in a malformed graph
        if kind is Constant:
            arr = node.data.handle
            text = scalar_text(arr) if is_inline_scalar(arr) else self._meta_ref(node)
            if self.typed:  # at every use, as TVM's printer (its memo holds the text with the comment)
                text += self._type_comment(node) if self.annotate is not None else \
                    f" /* ty={type_text(node.checked_type_)} */"
            return text
        if kind is GlobalVar:
            return self._global_text(node)
        if kind is Op:
            return node.name
        if kind is Constructor:
            return node.name_hint
        temp = self.temp_of.get(node)
        if temp is None:
            raise InternalError(f"text printer: a {kind.__name__} was used before it was bound")
        return temp

    def _meta_ref(self, node, key=None) -> str:
        ref = self.meta_index.get(id(node))
        if ref is None:
            key = key or node.type_key
            table = self.meta.setdefault(key, [])
            ref = f"meta[{key}][{len(table)}]"
            table.append(node)
            self.meta_index[id(node)] = ref
        return ref


@register_func("relay.ir.astext")
def astext(node, show_meta_data=True, annotate=None) -> str:
    """Print an IRModule or a Relay expression in the text format (what ``str(mod)`` shows).

    Parameters
    ----------
    node : IRModule or RelayExpr
        What to print.
    show_meta_data : bool
        Whether to append the metadata section (large constants); without it the text cannot be parsed back.
    annotate : callable, optional
        ``annotate(expr) -> str``: the comment printed after each expression instead of its type.

    Returns
    -------
    text : str

    Examples
    --------
    >>> x = relay.var("x", shape=(1, 4))
    >>> print(astext(IRModule.from_expr(relay.nn.relu(x))))   # doctest: +SKIP
    #[version = "0.0.5"]
    def @main(%x: Tensor[(1, 4), float32]) {
      nn.relu(%x)
    }
    """
    printer = RelayTextPrinter(show_meta_data, annotate)
    if isinstance(node, IRModule):
        return printer.print_module(node)
    return printer.print_expr(node)
