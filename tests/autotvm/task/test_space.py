"""Knob spaces (kiln/autotvm/task/space.py): enumeration, indexing, fallback values, JSON form."""

import pytest

from kiln.autotvm.task import ConfigEntity, ConfigSpace, FallbackConfigEntity, KnobError, OtherOptionEntity, SplitEntity
from kiln.error import KilnError


def make_space():
    cfg = ConfigSpace()
    cfg.define_split("tile_x", 12, num_outputs=2)
    cfg.define_knob("unroll", [True, False])
    cfg.define_reorder("order", ["a", "b", "c"], policy="all")
    cfg.define_annotate("ann", ["a", "b"], policy="try_unroll")
    return cfg


def test_split_space_enumerates_every_factorization():
    cfg = ConfigSpace()
    split = cfg.define_split("tile", 12, num_outputs=2)
    assert split == SplitEntity([12, 1])  # a space's knobs read as their first entity
    assert [e.size for e in cfg.space_map["tile"]] == [[12, 1], [6, 2], [4, 3], [3, 4], [2, 6], [1, 12]]
    cfg3 = ConfigSpace()
    cfg3.define_split("t", 8, num_outputs=3)
    assert len(cfg3.space_map["t"]) == 10 and all(e.size[0] * e.size[1] * e.size[2] == 8 for e in cfg3.space_map["t"])
    capped = ConfigSpace()
    capped.define_split("t", 12, num_outputs=2, max_factor=4, filter=lambda e: e.size[-1] != 2)
    assert [e.size[-1] for e in capped.space_map["t"]] == [1, 3, 4]


def test_space_size_and_mixed_radix_index():
    cfg = make_space()
    assert [len(s) for s in cfg.space_map.values()] == [6, 2, 6, 4]
    assert len(cfg) == 6 * 2 * 6 * 4
    seen = set()
    for i in range(len(cfg)):
        entity = cfg.get(i)
        assert entity.index == i and cfg.index_of(entity) == i
        seen.add(tuple(repr(entity[k]) for k in cfg.knob_names()))
    assert len(seen) == len(cfg)  # every index a different point
    second = cfg.get(1)  # the first knob varies fastest
    assert second["tile_x"].size == [6, 2] and second["unroll"].val is True
    assert cfg.get(6)["unroll"].val is False
    with pytest.raises(KnobError, match="outside the space of 288"):
        cfg.get(288)


def test_entity_reads_knobs_and_rejects_unknown_ones():
    entity = make_space().get(7)
    assert entity["tile_x"].size == [6, 2]
    assert entity.define_split("tile_x", 12) is entity["tile_x"]  # a template run against a point reads it
    with pytest.raises(KnobError, match="no knob 'tile_y'"):
        entity["tile_y"]
    with pytest.raises(KnobError, match="declares the knob 'tile_y', which this config does not have"):
        entity.define_knob("tile_y", [1, 2])
    assert isinstance(KnobError("x"), KilnError)


def test_json_round_trip_and_knob_features():
    cfg = make_space()
    entity = cfg.get(123)
    back = ConfigEntity.from_json_dict(entity.to_json_dict(), cfg)
    assert back == entity and back.index == 123
    assert entity.get_flatten_feature() == ConfigEntity.from_json_dict(entity.to_json_dict(), cfg).get_flatten_feature()
    with pytest.raises(KnobError, match="not the template's"):
        ConfigEntity.from_json_dict({"index": 0, "entity": [["tile_x", "sp", [12, 1]]]}, cfg)
    with pytest.raises(KnobError, match="is not in the space"):
        ConfigEntity.from_json_dict({"index": 0, "entity": [["tile_x", "sp", [5, 5]], ["unroll", "ot", True],
                                                             ["order", "re", [0, 1, 2]], ["ann", "an", ["none", "none"]]]},
                                    cfg)


def test_fallback_takes_the_templates_assignment():
    cfg = FallbackConfigEntity()
    cfg.define_split("tile_x", 12, num_outputs=2)
    cfg.define_knob("unroll", [True, False])
    assert cfg.is_fallback and cfg["tile_x"].size == [12, 1]
    cfg["tile_x"] = SplitEntity([-1, 4])
    cfg["unroll"] = OtherOptionEntity(False)
    assert cfg.define_split("tile_x", 12) == SplitEntity([-1, 4])  # defining again keeps the assignment
    space = ConfigSpace()
    space.define_split("tile_x", 12, num_outputs=2)
    space.define_knob("unroll", [True, False])
    assert space.get(space.index_of(cfg))["tile_x"].size == [3, 4]  # -1 resolved against the extent


def test_reorder_and_annotate_apply_to_a_schedule():
    from kiln import te

    a = te.placeholder((16, 8), name="a")
    b = te.compute((16, 8), lambda i, j: a[i, j] * 2.0, name="b")
    s = te.create_schedule(b.op)
    cfg = ConfigSpace()
    i, j = s[b].op.axis
    cfg.define_reorder("order", [i, j], policy="all")
    cfg.define_annotate("ann", [i, j], policy="try_unroll_vec")
    assert len(cfg.space_map["order"]) == 2 and len(cfg.space_map["ann"]) == 6
    point = cfg.get(cfg.index_of({"order": cfg.space_map["order"][1], "ann": cfg.space_map["ann"][-1]}))
    order = point["order"].apply(s, b, [i, j])
    point["ann"].apply(s, b, order)
    assert order == [j, i]
    with pytest.raises(KilnError, match="policy 'diagonal' is unknown"):
        ConfigSpace().define_annotate("x", [i], policy="diagonal")


def test_multi_filter_keeps_the_product_numbering_and_walks_the_points_it_keeps():
    cfg = ConfigSpace()
    cfg.define_split("rows", cfg.axis(8), num_outputs=2)
    cfg.define_split("cols", cfg.axis(6), num_outputs=2)
    assert len(cfg) == cfg.range_length == 16
    cfg.multi_filter(lambda e: e["rows"].size[-1] * e["cols"].size[-1] <= 6)
    kept = [i for i in range(16) if cfg._point(i)["rows"].size[-1] * cfg._point(i)["cols"].size[-1] <= 6]
    assert cfg.range_length == 16 and len(cfg) == len(kept) == 8 and cfg.dims == [4, 4]
    assert cfg.valid_indices() == kept and [c.index for c in cfg] == kept
    assert all(cfg.is_index_valid(i) == (i in kept) for i in range(16))
    for i in kept:
        assert cfg.index_of(cfg.get(i)) == i and cfg.knob2point(cfg.point2knob(i)) == i
    rejected = max(set(range(16)) - set(kept))
    with pytest.raises(KnobError, match="multi_filter"):
        cfg.get(rejected)
    with pytest.raises(KnobError, match="multi_filter rejects"):
        cfg.index_of(cfg._point(rejected))
    assert cfg.subrange_length(0, 16) == 8 and cfg.subrange_length(4, 8) == len([i for i in kept if 4 <= i < 8])
    assert cfg.get_next_index(kept[0]) == kept[1] and cfg.get_next_index(kept[1], -1) == kept[0]
    assert cfg.get_next_index(kept[-1]) is None and cfg.get_next_index(kept[0], -1) is None
    assert cfg.get_rand_index(to_exclude=kept[:-1]) == kept[-1]
    assert cfg.get_rand_index(to_exclude=kept) is None
    assert sorted(cfg.sample_ints(20)) == kept and cfg.random_walk(kept[0]) in kept
    assert "8 of 16 configs" in repr(cfg)
    with pytest.raises(KnobError, match="outside the space"):
        cfg.is_index_valid(16)
    cfg.get(kept[0]).multi_filter(lambda e: False)  # a point and a fallback only read knobs
    FallbackConfigEntity().multi_filter(lambda e: False)


def test_fallback_split_picks_the_largest_factors_from_the_inside_out():
    cfg = FallbackConfigEntity()
    cfg.define_split("t", cfg.axis(49), num_outputs=3)
    cfg.fallback_split("t", [-1, 8, 4])
    assert cfg["t"].size == [7, 7, 1]
    with pytest.raises(KnobError, match="no split of 49"):
        cfg.fallback_split("t", [-1, 1, 0])
    verbose = ConfigSpace()
    verbose.define_split("v", verbose.axis(224), policy="verbose", num_outputs=2)
    assert {e.size[-1] for e in verbose.space_map["v"]} == {1, 2, 4, 7, 8, 14, 16, 28, 32, 56, 64, 112, 128, 224}
