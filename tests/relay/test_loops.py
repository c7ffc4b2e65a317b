"""relay.loops.while_loop: a loop as a recursive let-bound function, run by the interpreter and the VM."""

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.runtime.vm import VirtualMachine

from ..target.conftest import HAVE_LLVM


def triangle():
    """sum of 0..9 by a while loop over (i, s)."""
    i, s = relay.var("i", shape=(), dtype="int32"), relay.var("s", shape=(), dtype="int32")
    loop = relay.loops.while_loop(lambda i, s: relay.less(i, relay.const(10)), [i, s],
                                  lambda i, s: [relay.add(i, relay.const(1)), relay.add(s, i)])
    return kiln.IRModule.from_expr(relay.Function([i, s], relay.TupleGetItem(loop(i, s), 1)))


def test_interpreter_runs_the_loop():
    zero = np.array(0, "int32")
    assert int(relay.create_executor("debug", mod=triangle()).evaluate()(zero, zero).numpy()) == 45
    assert int(relay.create_executor("debug", mod=triangle()).evaluate()(np.array(8, "int32"), zero).numpy()) == 17


@pytest.mark.skipif(not HAVE_LLVM, reason="needs llvmlite and a C compiler")
def test_vm_runs_the_loop_and_relay_build_refuses_it():
    exe = relay.vm.compile(triangle(), target="llvm")
    zero = np.array(0, "int32")
    assert int(VirtualMachine(exe, kiln.cpu(0)).run(zero, zero).numpy()) == 45
    with pytest.raises(kiln.error.KilnError, match="vm"):
        relay.build(triangle(), target="llvm")
