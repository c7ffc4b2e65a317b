"""IntSet.vector and IntervalSet built from numbers: the interval holds every lane's value."""

import random

from kiln import arith, tir
from kiln.tir.evaluator import evaluate_expr


def test_interval_from_numbers():
    s = arith.IntervalSet(2, 3)
    assert (s.min_value.value, s.max_value.value) == (2, 3)
    assert arith.IntSet.single_point(5).is_single_point()


def test_vector_holds_every_lane():
    x = tir.Var("x", "int32")
    rng = random.Random(2)
    for stride in (3, -2, 0):
        ramp = tir.Ramp(x, stride, 5)
        s = arith.IntSet.vector(ramp)
        for _ in range(10):
            env = {x: rng.randint(-50, 50)}
            lo, hi = evaluate_expr(s.min_value, env), evaluate_expr(s.max_value, env)
            lanes = [env[x] + stride * k for k in range(5)]
            assert (lo, hi) == (min(lanes), max(lanes))
    s = arith.IntSet.vector(tir.Ramp(5, 2, tir.vscale() * 4))
    assert s.min_value.value == 5 and s.max_value.same_as(arith.int_set.pos_inf())  # unbounded, as TVM writes it
    assert arith.IntSet.vector(tir.Broadcast(x, 4)).min_value is x
