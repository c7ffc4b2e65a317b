"""``CompareBeforeAfter`` (TVM's ``tvm.testing.CompareBeforeAfter``): a test class comparing a TIR transform's
output with an expected function, or checking that it raises.

A subclass sets ``transform`` (a Pass, a method returning a Pass or a module-to-module function, or a fixture),
``before`` and ``expected``: a PrimFunc, an undecorated TVMScript function (parsed when the test runs, so a broken
script fails only its own test), a method or fixture returning one, or for ``expected`` an exception class. The
inherited ``test_compare`` runs the check.
"""

import inspect
import textwrap

import pytest


def _is_method(func) -> bool:
    params = list(inspect.signature(func).parameters)
    return bool(params) and params[0] == "self"


def _parse(func, check_well_formed):
    from .. import script

    return script.from_source("@T.prim_func\n" + textwrap.dedent(inspect.getsource(func)))


class CompareBeforeAfter:
    """Compare ``transform(before)`` with ``expected`` (see the module docstring)."""

    check_well_formed: bool = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for names, normalize in ((("before", "Before"), cls._normalize_ir), (("expected", "Expected"),
                                                                              cls._normalize_expected)):
            for name in names:
                if name in cls.__dict__:
                    value = cls.__dict__[name]
                    setattr(cls, names[0], value if hasattr(value, "_pytestfixturefunction") else normalize(value))
                    break
        if "transform" in cls.__dict__:
            cls.transform = cls._normalize_transform(cls.__dict__["transform"])

    @classmethod
    def _normalize_ir(cls, func):
        from ..ir.module import IRModule
        from ..tir.function import PrimFunc

        if isinstance(func, PrimFunc | IRModule):
            def inner(self):
                return func
        elif _is_method(func):
            def inner(self):
                return func(self)
        elif inspect.isclass(func):
            def inner(self):
                funcs = {}
                for name, method in func.__dict__.items():
                    if name.startswith("_"):
                        continue
                    f = method if isinstance(method, PrimFunc) else _parse(method, self.check_well_formed)
                    funcs[name] = f.with_attr("global_symbol", name)
                return IRModule(funcs)
        else:
            def inner(self):
                return _parse(func, self.check_well_formed)
        return pytest.fixture(inner)

    @classmethod
    def _normalize_expected(cls, func):
        if inspect.isclass(func) and issubclass(func, Exception):
            def inner(self):
                return func

            return pytest.fixture(inner)
        return cls._normalize_ir(func)

    @classmethod
    def _normalize_transform(cls, transform):
        from ..ir.transform import Pass

        def apply(module_transform):
            def run(obj):
                from ..ir.module import IRModule
                from ..tir.function import PrimFunc

                if isinstance(obj, IRModule):
                    return module_transform(obj)
                if isinstance(obj, PrimFunc):
                    return module_transform(IRModule({"main": obj}))["main"]
                raise TypeError(f"CompareBeforeAfter: cannot transform a {type(obj).__name__}")

            return run

        if hasattr(transform, "_pytestfixturefunction"):
            cls._transform_orig = transform

            def inner(self, _transform_orig):
                return apply(_transform_orig)
        elif isinstance(transform, Pass):
            def inner(self):
                return apply(transform)
        elif _is_method(transform):
            def inner(self):
                return apply(transform(self))
        else:
            raise TypeError(f"CompareBeforeAfter.transform must be a Pass or a method, got {transform!r}")
        return pytest.fixture(inner)

    def test_compare(self, before, expected, transform):
        """Run the transform on ``before``; compare with ``expected`` or expect its exception."""
        from ..ir import assert_structural_equal

        if inspect.isclass(expected) and issubclass(expected, Exception):
            with pytest.raises(expected):
                after = transform(before)
                pytest.fail(f"expected {expected.__name__}, the transform returned:\n{after}")
            return
        after = transform(before)
        from ..tir.function import PrimFunc

        if isinstance(after, PrimFunc) and isinstance(expected, PrimFunc):
            # the functions' names (their global symbols) are not what the comparison is about
            after = after.with_attr("global_symbol", "main")
            expected = expected.with_attr("global_symbol", "main")
        try:
            assert_structural_equal(after, expected)
        except ValueError as err:
            raise ValueError(f"the transform's result differs from expected:\nbefore:\n{before}\nafter:\n{after}\n"
                             f"expected:\n{expected}") from err
