"""AnnotatedRegionSet: regions between compiler_begin and compiler_end annotations."""

import pytest

from kiln import relay
from kiln.error import KilnError
from kiln.ir import Op
from kiln.relay.analysis.annotated_regions import AnnotatedRegionSet
from kiln.relay.op.annotation import compiler_begin as cb
from kiln.relay.op.annotation import compiler_end as ce


def _regions(func):
    return AnnotatedRegionSet(func, Op.get("annotation.compiler_begin"), Op.get("annotation.compiler_end"))


def test_region_set_finds_inputs_outputs_and_targets():
    x = relay.var("x", shape=(3,))
    b = cb(x, "t")
    r = relay.nn.relu(b)
    e = ce(r, "t")
    d = ce(relay.abs(cb(e, "u")), "u")
    regions = _regions(relay.Function([x], d))
    assert len(regions) == 2
    first = regions.get_region(r)
    assert first.get_target() == "t" and first.get_inputs() == [b] and first.get_outputs() == [e]
    assert first.args == [b] and first.rets == [e] and r in first.nodes  # TVM's field names
    assert relay.analysis.AnnotatedRegionSet is AnnotatedRegionSet
    assert regions.get_region(x) is None and regions.get_region(d).get_target() == "u"


def test_an_end_outside_every_region_is_named():
    x = relay.var("x", shape=(3,))
    with pytest.raises(KilnError, match="no region ends"):
        _regions(relay.Function([x], ce(relay.nn.relu(x), "t")))
