"""The unification domain of ``PlanDevices`` (TVM's ``DeviceDomains``).

A domain says where a value lives: a first-order domain holds one ``VirtualDevice`` (possibly unconstrained, a
unification variable), a higher-order domain is a function's ``fn(D1, ..., Dn): Dr``. Domains are unified with a
union-find (``lookup`` follows the equivalences, compressing paths); joining two first-order domains joins their
virtual devices field by field (``join_virtual_devices``) and fails when two fields are set differently. Every
expression gets a domain (``domain_for``, memoized by the expression; a global function's by its name), and every
call a domain for its callee (``domain_for_callee``): an operator is device polymorphic (its arguments and result
share one fresh domain), ``on_device`` and ``device_copy`` name their devices, and the shape and memory operators
keep shapes on the host.
"""

from ...error import KilnError
from ...ir.adt import Constructor
from ...ir.expr import GlobalVar
from ...ir.op import Op
from ...ir.type import FuncType
from ...runtime.device import Device
from ...target.virtual_device import VirtualDevice
from ..expr import Call

__all__ = ["DeviceDomain", "DeviceDomains", "join_virtual_devices", "default_virtual_device"]

UNCONSTRAINED = VirtualDevice()


def _make_vd(device_type, device_id, target, memory_scope):
    out = VirtualDevice(None, target, memory_scope)
    object.__setattr__(out, "device_type_int", device_type)
    object.__setattr__(out, "virtual_device_id", device_id)
    return out


def join_virtual_devices(lhs, rhs):
    """The virtual device satisfying both ``lhs`` and ``rhs`` (each field from whichever sets it), or None when
    they set a field differently (TVM's ``VirtualDevice::Join``)."""
    if lhs == rhs:
        return lhs
    fields = []
    for a, b, unset in ((lhs.device_type_int, rhs.device_type_int, -1),
                        (lhs.virtual_device_id, rhs.virtual_device_id, -1),
                        (lhs.target, rhs.target, None), (lhs.memory_scope, rhs.memory_scope, "")):
        if a != unset and b != unset and a != b:
            return None
        fields.append(a if a != unset else b)
    return _make_vd(*fields)


def default_virtual_device(lhs, rhs):
    """``lhs`` with each unset field taken from ``rhs`` (the target only when ``rhs``'s device type is the one
    ``lhs`` ends up with; TVM's ``VirtualDevice::Default``)."""
    if lhs == rhs:
        return lhs
    device_type = lhs.device_type_int if lhs.device_type_int != -1 else rhs.device_type_int
    device_id = lhs.virtual_device_id if lhs.virtual_device_id >= 0 else rhs.virtual_device_id
    target = lhs.target
    if target is None and rhs.target is not None and rhs.device_type_int == device_type:
        target = rhs.target
    scope = lhs.memory_scope or rhs.memory_scope
    return _make_vd(device_type, device_id, target, scope)


def is_fully_constrained(vd) -> bool:
    """Whether every field of ``vd`` is set (a target, a device id and a memory scope)."""
    return vd.target is not None and vd.virtual_device_id != -1 and bool(vd.memory_scope)


class DeviceDomain:
    """A first-order domain (``virtual_device``) or a function's domain (``args_and_result``, the result last)."""

    __slots__ = ("virtual_device", "args_and_result")

    def __init__(self, virtual_device=UNCONSTRAINED, args_and_result=()):
        self.virtual_device = virtual_device
        self.args_and_result = tuple(args_and_result)

    @property
    def is_higher_order(self) -> bool:
        return bool(self.args_and_result)

    @property
    def function_arity(self) -> int:
        return len(self.args_and_result) - 1

    def function_param(self, i):
        return self.args_and_result[i]

    def function_result(self):
        return self.args_and_result[-1]


class DeviceDomains:
    """Every expression's domain and the unification state (see the module docstring).

    Parameters
    ----------
    config : CompilationConfig
        The targets, host and default device.
    type_of : callable
        ``expr -> Type``: the checked type of an expression (a global function's from its module).
    """

    def __init__(self, config, type_of):
        self.config = config
        self.type_of = type_of
        self.equiv: dict = {}  # domain -> the domain it was unified into
        self.expr_domain: dict = {}
        self.callee_domain: dict = {}
        self.constrained: dict = {}  # fully constrained virtual device -> its one domain
        self.host_domain = self.make_first_order(config.host_virtual_device)

    # -- making domains ------------------------------------------------------------------------------------------
    def make_first_order(self, vd):
        if is_fully_constrained(vd):
            if vd not in self.constrained:
                self.constrained[vd] = DeviceDomain(vd)
            return self.constrained[vd]
        return DeviceDomain(vd)

    @staticmethod
    def make_higher_order(args_and_result):
        return DeviceDomain(UNCONSTRAINED, args_and_result)

    def make_domain(self, ty, vd):
        """A domain of the shape of ``ty``: a function type's parameters free, its result (recursively) on ``vd``."""
        if isinstance(ty, FuncType):
            return DeviceDomain(UNCONSTRAINED, [*(self.make_domain(a, UNCONSTRAINED) for a in ty.arg_types),
                                                self.make_domain(ty.ret_type, vd)])
        return self.make_first_order(vd)

    def free(self, ty):
        return self.make_domain(ty, UNCONSTRAINED)

    def for_virtual_device(self, ty, vd):
        """A domain of the shape of ``ty`` whose result is on (the canonical form of) ``vd``."""
        vd = self.config.canonical_virtual_device(vd)
        if vd.is_fully_unconstrained:
            raise KilnError("PlanDevices: a device constraint names no device")
        return self.make_domain(ty, vd)

    # -- unification ---------------------------------------------------------------------------------------------
    def lookup(self, domain):
        root = domain
        while root in self.equiv:
            root = self.equiv[root]
        while domain is not root:  # path compression
            nxt = self.equiv[domain]
            self.equiv[domain] = root
            domain = nxt
        return root

    def join_or_none(self, lhs, rhs):
        if lhs is rhs:
            return lhs
        if len(lhs.args_and_result) != len(rhs.args_and_result):
            raise KilnError("PlanDevices: a function and a first-order value (or functions of different arities) "
                            "would share a device domain")
        if not lhs.args_and_result:
            if rhs.virtual_device.is_fully_unconstrained:
                return lhs
            if lhs.virtual_device.is_fully_unconstrained:
                return rhs
            joined = join_virtual_devices(lhs.virtual_device, rhs.virtual_device)
            if joined is None:
                return None
            return self.make_first_order(self.config.canonical_virtual_device(joined))
        parts = []
        for a, b in zip(lhs.args_and_result, rhs.args_and_result, strict=True):
            joined = self.unify_or_none(a, b)
            if joined is None:
                return None
            parts.append(joined)
        return self.make_higher_order(parts)

    def unify_or_none(self, lhs, rhs):
        lhs, rhs = self.lookup(lhs), self.lookup(rhs)
        joined = self.join_or_none(lhs, rhs)
        if joined is None:
            return None
        if lhs is not joined:
            self.equiv[lhs] = joined
        if rhs is not joined:
            self.equiv[rhs] = joined
        return joined

    def collapse(self, first_order, higher_order) -> bool:
        """Put every parameter and the result of ``higher_order`` on ``first_order``'s device."""
        for part in higher_order.args_and_result:
            if self.unify_or_none(part, first_order) is None:
                return False
        return True

    def unify_collapsed(self, first_order, maybe_higher_order) -> bool:
        if maybe_higher_order.is_higher_order:
            return self.collapse(first_order, maybe_higher_order)
        return self.unify_or_none(first_order, maybe_higher_order) is not None

    # -- the domains of expressions ------------------------------------------------------------------------------
    @staticmethod
    def _key(expr):
        return ("global", expr.name_hint) if isinstance(expr, GlobalVar) else expr

    def contains(self, expr) -> bool:
        return self._key(expr) in self.expr_domain

    def domain_for(self, expr):
        key = self._key(expr)
        found = self.expr_domain.get(key)
        if found is not None:
            return self.lookup(found)
        domain = self.free(self.type_of(expr))
        self.expr_domain[key] = domain
        return domain

    def domain_for_callee(self, call):
        """The domain of what ``call`` calls (``fn(args...): result``)."""
        found = self.callee_domain.get(call)
        if found is not None:
            return self.lookup(found)
        op = call.op
        if isinstance(op, Constructor):
            # a constructor is device polymorphic too, its fields on the device of the value it builds
            result = self.free(self.type_of(call))
            parts = []
            for arg in call.args:
                param = self.free(self.type_of(arg))
                if not self.unify_collapsed(result, param):
                    raise KilnError("PlanDevices: a constructor's fields cannot be put on its value's device")
                parts.append(param)
            domain = self.make_higher_order([*parts, result])
            self.callee_domain[call] = domain
            return domain
        if not isinstance(op, Op):
            return self.domain_for(op)
        name, attrs, args = op.name, call.attrs, call.args
        ty = self.type_of(call)
        if name == "on_device":
            body_ty = self.type_of(args[0])
            parts = [self.for_virtual_device(body_ty, attrs.virtual_device) if attrs.constrain_body
                     else self.free(body_ty),
                     self.for_virtual_device(body_ty, attrs.virtual_device) if attrs.constrain_result
                     else self.free(body_ty)]
        elif name == "device_copy":
            body_ty = self.type_of(args[0])
            parts = [self.for_virtual_device(body_ty, attrs.src_virtual_device),
                     self.for_virtual_device(body_ty, attrs.dst_virtual_device)]
        elif name == "memory.alloc_storage":
            # the sizes are host values; the storage is where its attributes say
            vd = getattr(attrs, "virtual_device", None)
            if vd is None:
                vd = VirtualDevice(Device(attrs.device_type, attrs.device_id))
            parts = [self.host_domain for _ in args] + [self.for_virtual_device(ty, vd)]
        elif name == "memory.alloc_tensor" and len(args) == 3:
            free = self.free(ty)
            parts = [free, self.host_domain, self.host_domain, free]
        elif name == "vm.shape_of":
            parts = [self.free(self.type_of(args[0])), self.host_domain]
        elif name == "vm.invoke_tvm_op" and len(args) == 3:
            free = self.free(ty)
            parts = [self.free(self.type_of(args[0])), free, free, free]
        elif name == "vm.reshape_tensor" and len(args) == 2:
            free = self.free(ty)
            parts = [free, self.host_domain, free]
        else:  # an operator is device polymorphic: its arguments and result share one device
            free = self.make_first_order(UNCONSTRAINED)
            parts = [free for _ in args] + [free]
        domain = self.make_higher_order(parts)
        self.callee_domain[call] = domain
        return domain

    def unify_expr_exact(self, expr, other):
        """Unify ``expr``'s domain with ``other`` (an expression or a domain); a conflict is an error."""
        lhs = self.domain_for(expr)
        rhs = other if isinstance(other, DeviceDomain) else self.domain_for(other)
        if self.unify_or_none(lhs, rhs) is None:
            raise KilnError(f"PlanDevices: incompatible virtual devices for {_short(expr)}: "
                            f"{self.to_string(lhs)} and {self.to_string(rhs)}")

    def optional_unify_expr_exact(self, lhs, rhs):
        """Unify two expressions' domains when they agree; leave both as they were when they do not."""
        snapshot = dict(self.equiv)
        if self.unify_or_none(self.domain_for(lhs), self.domain_for(rhs)) is None:
            self.equiv = snapshot

    def unify_expr_collapsed(self, first_order_expr, expected):
        actual = self.domain_for(first_order_expr)
        if not self.unify_collapsed(actual, expected):
            raise KilnError(f"PlanDevices: incompatible virtual devices for {_short(first_order_expr)}: "
                            f"{self.to_string(actual)} and {self.to_string(expected)}")

    # -- defaulting and reading ----------------------------------------------------------------------------------
    def is_fully_constrained(self, domain) -> bool:
        domain = self.lookup(domain)
        if not domain.args_and_result:
            return is_fully_constrained(domain.virtual_device)
        return all(self.is_fully_constrained(d) for d in domain.args_and_result)

    def set_default(self, domain, default):
        domain = self.lookup(domain)
        if not domain.args_and_result:
            vd = self.config.canonical_virtual_device(default_virtual_device(domain.virtual_device, default))
            if self.unify_or_none(domain, self.make_first_order(vd)) is None:
                raise KilnError(f"PlanDevices: cannot default {self.to_string(domain)} to {default}")
        else:
            for part in domain.args_and_result:
                self.set_default(part, default)

    def set_result_default_then_params(self, domain, default):
        """Default the result to ``default``, then the parameters to wherever the result is."""
        if not domain.args_and_result:
            self.set_default(domain, default)
        else:
            self.set_default(self.result_domain(domain), default)
            self.set_default(domain, self.result_virtual_device(domain))

    def result_domain(self, domain):
        domain = self.lookup(domain)
        while domain.args_and_result:
            domain = self.lookup(domain.args_and_result[-1])
        return domain

    def result_virtual_device(self, domain):
        return self.result_domain(domain).virtual_device

    def to_string(self, domain) -> str:
        domain = self.lookup(domain)
        if not domain.args_and_result:
            return "?" if domain.virtual_device.is_fully_unconstrained else str(domain.virtual_device)
        params = ",".join(self.to_string(d) for d in domain.args_and_result[:-1])
        return f"fn({params}):{self.to_string(domain.args_and_result[-1])}"


def _short(expr) -> str:
    text = str(expr) if not isinstance(expr, Call) else f"a call of {getattr(expr.op, 'name', expr.op)}"
    return text if len(text) < 120 else text[:117] + "..."
