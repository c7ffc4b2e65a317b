from kiln import relay


def test_visitor_reaches_a_function_type_nested_in_a_tuple():
    class Count(relay.TypeVisitor):
        def __init__(self):
            self.funcs = 0
            self.tensors = 0

        def visit_func_type(self, ft):
            self.funcs += 1
            super().visit_func_type(ft)

        def visit_tensor_type(self, tt):
            self.tensors += 1

    t = relay.TensorType((2,), "float32")
    counter = Count()
    counter.visit(relay.TupleType([t, relay.FuncType([t], relay.TupleType([t, t]))]))
    assert (counter.funcs, counter.tensors) == (1, 4)


def test_mutator_rebuilds_with_replaced_parts():
    class Widen(relay.TypeMutator):
        def visit_tensor_type(self, tt):
            return relay.TensorType(tt.shape, "float64")

    t = relay.TensorType((3,), "float32")
    out = Widen().visit(relay.FuncType([t, relay.TupleType([t])], t))
    assert str(out) == str(relay.FuncType([relay.TensorType((3,), "float64"),
                                           relay.TupleType([relay.TensorType((3,), "float64")])],
                                          relay.TensorType((3,), "float64")))
