"""The bad-input probe (kiln/testing/input_probe.py): no random bytes, truncation or misuse thrown at kiln's loaders
and executors ends in anything but a KilnError or a result, and the probe itself catches crashes and hangs."""

import os
import pathlib
import random
import time

from kiln.testing import input_probe
from kiln.testing.input_probe_targets import ProbeTarget, damage_bytes, damage_json, damage_text


def _abort_on_odd_length(state, data, path):
    """A stand-in for a loader that crashes the process on some inputs."""
    if len(data) % 2:
        os.abort()


def _sleep(state, data, path):
    time.sleep(600)


ABORTS = ProbeTarget("aborts", "blob.bin", lambda data, rng: (data[: rng.randrange(len(data) + 1)], "cut"),
                     _abort_on_odd_length)
ACCEPTS = ProbeTarget("accepts", "blob.bin", damage_bytes, lambda state, data, path: None)
HANGS = ProbeTarget("hangs", "blob.bin", lambda data, rng: (data, "none"), _sleep)


def test_every_entry_point_refuses_damage_cleanly():
    """A small budget over every target (``python -m kiln.testing.input_probe --cases 200`` runs more): each case
    ends in a KilnError or is accepted and runs, never another exception, a crash or a hang."""
    outcomes = input_probe.probe(seed=11, cases=6)
    bugs = [f"{o.kind} {o.target} [{o.damage}]: {o.detail} (replay: {o.replay()})" for o in outcomes if o.is_bug]
    assert not bugs, "\n".join(bugs)
    assert len(outcomes) == 6 * len(input_probe.TARGETS)
    assert {o.target for o in outcomes if o.kind == "refused"} == set(input_probe.TARGETS)


def test_a_crash_is_reported_and_the_next_case_runs(tmp_path):
    (tmp_path / "blob.bin").write_bytes(bytes(range(40)))
    # the cut lengths derive from the target's name, which holds this file's path: enough cases that both parities
    # occur wherever the checkout lives (5 cases were all odd in one clone)
    outcomes = input_probe.probe([f"{__file__}:ABORTS"], seed=3, cases=16, workdir=tmp_path)
    assert [o.index for o in outcomes] == list(range(16))  # a fresh worker went on after each crash
    kinds = {o.kind for o in outcomes}
    assert kinds == {"ok", "crash"}, kinds
    for o in outcomes:
        data, _ = ABORTS.mutate(bytes(range(40)), random.Random(f"{o.target}/3/{o.index}"))
        assert (o.kind == "crash") == bool(len(data) % 2)
    crash = next(o for o in outcomes if o.kind == "crash")
    assert "exit status -6" in crash.detail and f"--seed 3 --replay {crash.index}" in crash.replay()


def test_a_hang_is_killed_and_reported(tmp_path):
    (tmp_path / "blob.bin").write_bytes(b"data")
    outcomes = input_probe.probe([f"{__file__}:HANGS"], seed=0, cases=2, workdir=tmp_path, case_timeout=3)
    assert [(o.index, o.kind) for o in outcomes] == [(0, "hang"), (1, "hang")]  # killed, and a new worker went on
    assert "more than 3 s" in outcomes[0].detail


def test_damage_is_reproducible_and_varied():
    text = '{"a": [1, 2, {"b": "c"}], "d": 3.5}'
    for damage, data in ((damage_bytes, text.encode()), (damage_text, text), (damage_json, text)):
        first = [damage(data, random.Random(k)) for k in range(40)]
        assert first == [damage(data, random.Random(k)) for k in range(40)]
        assert len({repr(d) for d, _ in first}) > 20


def test_command_line(tmp_path, capsys):
    (tmp_path / "blob.bin").write_bytes(bytes(range(40)))
    status = input_probe.main(["--targets", f"{pathlib.Path(__file__)}:ACCEPTS", "--cases", "3", "--seed", "3",
                               "--workdir", str(tmp_path)])
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"{__file__}:ACCEPTS: ok 3, bare 0, silent 0, crash 0, hang 0" and status == 0
