"""Packages (kiln/runtime/package.py): tvmc's module.tar with mod.so, mod.json and mod.params, written and read back
without pickle and without extracting member names."""

import io
import os
import tarfile

import numpy as np
import pytest

import kiln
from kiln import relay
from kiln.contrib import graph_executor
from kiln.error import KilnError
from kiln.runtime.package import export_package, load_package


@pytest.fixture(scope="module")
def factory():
    x = relay.var("x", shape=(2, 3))
    w = relay.const(np.arange(6, dtype="float32").reshape(2, 3))
    with kiln.transform.PassContext(opt_level=3):
        return relay.build(relay.Function([x], relay.nn.relu(x - w)), target="llvm")


def test_round_trip_runs(factory, tmp_path):
    path = export_package(factory, tmp_path / "module.tar")
    assert path == str(tmp_path / "module.tar") and not list(tmp_path.glob("*.partial"))
    with tarfile.open(path) as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert sorted(members) == ["mod.json", "mod.params", "mod.so"] and all(m.isfile() for m in members.values())
    package = load_package(path)
    assert package.graph == factory.get_graph_json()
    assert relay.load_param_dict(package.params).keys() == factory.get_params().keys()
    m = graph_executor.create(package.graph, package.lib, kiln.cpu(0))
    m.load_params(package.params)
    x = np.full((2, 3), 3.0, "float32")
    m.run(x=x)
    np.testing.assert_array_equal(m.get_output(0).numpy(), np.maximum(x - np.arange(6).reshape(2, 3), 0))


def write_tar(path, members):
    with tarfile.open(path, "w") as tar:
        for name, data, kind in members:
            info = tarfile.TarInfo(name)
            info.type = kind
            if kind == tarfile.SYMTYPE:
                info.linkname = "/etc/passwd"
            info.size = len(data) if kind == tarfile.REGTYPE else 0
            tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)


def test_nothing_is_written_outside_a_private_directory(factory, tmp_path):
    good = load_package(export_package(factory, tmp_path / "good.tar"))
    with tarfile.open(tmp_path / "good.tar") as tar:
        parts = {n: tar.extractfile(n).read() for n in ("mod.so", "mod.json", "mod.params")}
    escape = tmp_path / "sub" / ".." / ".." / "escaped"
    reg = tarfile.REGTYPE
    write_tar(tmp_path / "traversal.tar", [("../escaped", b"x", reg), (str(escape), b"x", reg),
                                           *((n, d, reg) for n, d in parts.items())])
    package = load_package(tmp_path / "traversal.tar")  # unknown members are never extracted
    assert package.graph == good.graph
    assert not (tmp_path.parent / "escaped").exists() and not os.path.exists("escaped")


@pytest.mark.parametrize("members,message", [
    ([("mod.json", b"{}", tarfile.REGTYPE)], "not a kiln package: it lacks mod.so, mod.params"),
    ([("mod.so", b"", tarfile.SYMTYPE), ("mod.json", b"{}", tarfile.REGTYPE), ("mod.params", b"", tarfile.REGTYPE)],
     "package member 'mod.so' is not a regular file"),
    ([("mod.json", b"{}", tarfile.REGTYPE), ("./mod.json", b"{}", tarfile.REGTYPE)], "'mod.json' appears twice"),
    ([("mod.so", b"not a library", tarfile.REGTYPE), ("mod.json", b"{}", tarfile.REGTYPE),
      ("mod.params", b"", tarfile.REGTYPE)], "bad.tar: mod.so: load_module: mod.so "),  # not the temporary copy's path
])
def test_bad_packages_are_named(tmp_path, members, message):
    write_tar(tmp_path / "bad.tar", members)
    with pytest.raises(KilnError, match="bad.tar") as info:
        load_package(tmp_path / "bad.tar")
    assert message in str(info.value)


def test_not_a_package(tmp_path):
    (tmp_path / "model.onnx").write_bytes(b"\x08\x07")
    with pytest.raises(KilnError, match=r"model.onnx is not a kiln package \(not a tar archive\)"):
        load_package(tmp_path / "model.onnx")
    with pytest.raises(KilnError, match="no package file at"):
        load_package(tmp_path / "missing.tar")
    with pytest.raises(KilnError, match="is not a file"):
        load_package(tmp_path)


@pytest.mark.parametrize("compression", ["", "gz", "xz"])
def test_packages_cut_short_are_refused(factory, tmp_path, compression):
    """Found by the bad-input probe: a package cut inside a member's data raised tarfile's ReadError."""
    with open(export_package(factory, tmp_path / "good.tar"), "rb") as f:
        data = plain = f.read()
    if compression:
        with tarfile.open(fileobj=io.BytesIO(plain)) as src, \
                tarfile.open(tmp_path / "c.tar", f"w:{compression}") as dst:
            for member in src.getmembers():
                dst.addfile(member, src.extractfile(member))
        data = (tmp_path / "c.tar").read_bytes()
        assert load_package(tmp_path / "c.tar").graph == factory.get_graph_json()  # compressed packages load
    for cut in (len(data) // 10, len(data) // 3, len(data) // 2):
        (tmp_path / "cut.tar").write_bytes(data[:cut])
        with pytest.raises(KilnError, match=r"cut.tar: (the package is damaged or cut short|.*not a kiln package|"
                                            r"mod.so: load_module)"):
            load_package(tmp_path / "cut.tar")
