"""``kiln compile`` (kiln/cli/compile.py): ONNX or Relay text in, a package out; the packages run (``kiln run`` in a
subprocess) and agree with onnxruntime; bad input is one line on stderr."""

import json
import pathlib
import re
import tarfile

import numpy as np
import pytest

from kiln import relay
from kiln.cli import main
from kiln.runtime.package import load_package

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def run_and_compare(cli, package, model, x, tmp_path, *flags):
    """``kiln run package`` on ``x`` (saved as data in an npz) agrees with onnxruntime on ``model``."""
    np.savez(tmp_path / "x.npz", data=x)
    done = cli.kiln("run", package, "--inputs", tmp_path / "x.npz", "--outputs", tmp_path / "out.npz", *flags)
    assert done.returncode == 0, done.stderr
    got = np.load(tmp_path / "out.npz")["output_0"]
    (want,) = cli.onnxruntime_outputs(model, {"data": x})
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    return done


def test_compile_shows_each_step_and_writes_tvmc_package(cli, tiny_model, tmp_path):
    package = tmp_path / "module.tar"
    done = cli.kiln("compile", tiny_model, "-o", package)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"kiln compile: {tiny_model} -> {package} (target 'llvm', opt_level 3)"
    steps = [line.split()[0] for line in lines[1:]]
    assert steps == ["import", "optimize", "lower", "codegen", "package"]
    assert all(float(line.split()[1]) >= 0 and line.split()[2] == "s" for line in lines[1:])
    assert "inputs data float32[1, 3, 8, 8]" in lines[1]
    with tarfile.open(package) as tar:
        assert sorted(tar.getnames()) == ["mod.json", "mod.params", "mod.so"]
    loaded = load_package(package)
    graph = json.loads(loaded.graph)
    conv = next(n for n in graph["nodes"] if "conv2d" in n["name"])
    # on CPUs AlterOpLayout makes the conv its blocked form, as TVM's does
    assert conv["attrs"]["relay_ops"].split(",")[0] in ("nn.conv2d", "nn.contrib_conv2d_NCHWc")
    assert int(conv["attrs"]["flops"]) == 2 * 4 * 64 * 27
    assert len(relay.load_param_dict(loaded.params)) >= 2


def test_symbolic_batch_is_one_unless_shapes_say(cli, tmp_path):
    model = cli.tiny_cnn(tmp_path / "batch.onnx", batch="N")
    done = cli.kiln("compile", model, "-o", tmp_path / "one.tar")
    assert done.returncode == 0
    assert "input 'data': symbolic dimension 'N' (axis 0) set to 1" in done.stderr
    graph = json.loads(load_package(tmp_path / "one.tar").graph)
    assert graph["attrs"]["shape"][1][0] == [1, 3, 8, 8]
    done = cli.kiln("compile", model, "-o", tmp_path / "two.tar", "--input-shapes", "data:[2, 3, 8, 8]")
    assert done.returncode == 0 and "symbolic" not in done.stderr
    run_and_compare(cli, tmp_path / "two.tar", model, cli.images(batch=2), tmp_path)


def test_weights_listed_among_inputs(cli, tmp_path):
    model = cli.tiny_cnn(tmp_path / "old.onnx", weights_as_inputs=True)
    done = cli.kiln("compile", model, "-o", tmp_path / "old.tar")
    assert done.returncode == 0, done.stderr
    assert "inputs data float32[1, 3, 8, 8]\n" in done.stdout  # the weights are not inputs to feed
    run_and_compare(cli, tmp_path / "old.tar", model, cli.images(), tmp_path)


def test_dump_code_llvm(cli, tiny_model, tmp_path):
    package = tmp_path / "module.tar"
    done = cli.kiln("compile", tiny_model, "-o", package, "--dump-code", "relay,tir,ll,asm")
    assert done.returncode == 0, done.stderr
    for fmt in ("relay", "tir", "ll", "asm"):
        assert f"dumped     {package}.{fmt}" in done.stdout
    imported = relay.parse((tmp_path / "module.tar.relay").read_text())
    assert imported["main"].params[0].name_hint == "data"
    tir = (tmp_path / "module.tar.tir").read_text()
    assert "@T.prim_func" in tir and re.search(r'"kiln.relay_ops": \["nn.(contrib_)?conv2d', tir)
    assert "define" in (tmp_path / "module.tar.ll").read_text()
    assert re.search("tvmgen_default_fused_nn_(contrib_)?conv2d", (tmp_path / "module.tar.asm").read_text())


@pytest.mark.needs_cc
def test_c_target_dumps_c_and_runs(cli, tiny_model, tmp_path):
    package = tmp_path / "c.tar"
    done = cli.kiln("compile", tiny_model, "-o", package, "--target", "c", "--dump-code", "c")
    assert done.returncode == 0, done.stderr
    assert re.search("tvmgen_default_fused_nn_(contrib_)?conv2d", (tmp_path / "c.tar.c").read_text())
    run_and_compare(cli, package, tiny_model, cli.images(), tmp_path)


def test_pass_options_reach_the_build(cli, tiny_model, tmp_path):
    package = tmp_path / "nhwc.tar"
    done = cli.kiln("compile", tiny_model, "-o", package, "-O", "2", "--disabled-pass", "AlterOpLayout,FoldScaleAxis",
                    "--desired-layout", "NHWC", "--pass-config", "relay.FuseOps.max_depth=2")
    assert done.returncode == 0, done.stderr
    graph = json.loads(load_package(package).graph)
    shapes = graph["attrs"]["shape"][1]
    conv = next(n for n in graph["nodes"] if "conv2d" in n["name"])
    src, index, _ = conv["inputs"][0]
    assert shapes[graph["node_row_ptr"][src] + index] == [1, 8, 8, 3]  # NHWC data, not NCHW16c
    run_and_compare(cli, package, tiny_model, cli.images(), tmp_path)


def test_relay_text_compiles_and_runs(cli, tmp_path):
    package = tmp_path / "mlp.tar"
    done = cli.kiln("compile", EXAMPLES / "mlp.relay", "-o", package)
    assert done.returncode == 0, done.stderr
    assert "Relay text" in done.stdout
    rng = np.random.default_rng(0)
    mod = relay.parse((EXAMPLES / "mlp.relay").read_text())
    inputs = {p.name_hint: rng.standard_normal([int(d) for d in p.type_annotation.shape]).astype("float32")
              for p in mod["main"].params}
    np.savez(tmp_path / "in.npz", **inputs)
    done = cli.kiln("run", package, "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "out.npz")
    assert done.returncode == 0, done.stderr
    want = relay.create_executor("debug", mod=mod).evaluate()(**inputs).numpy()
    np.testing.assert_allclose(np.load(tmp_path / "out.npz")["output_0"], want, rtol=1e-5, atol=1e-6)


def test_tuning_records_are_applied_with_a_note(capsys, tiny_model, tmp_path):
    records = tmp_path / "records.json"
    records.write_text("")
    code = main(["compile", tiny_model, "-o", str(tmp_path / "m.tar"), "--tuning-records", str(records)])
    err = capsys.readouterr().err
    assert code == 0 and (tmp_path / "m.tar").exists()
    assert err.startswith("kiln compile: note: --tuning-records") and ": 0 records; each kernel" in err


@pytest.fixture
def bad_files(tmp_path):
    (tmp_path / "text.onnx").write_text("this is not a model\n")
    (tmp_path / "empty.onnx").write_bytes(b"")
    (tmp_path / "model.bin").write_bytes(b"\x00")
    (tmp_path / "bad.relay").write_text("def @main(%x: Tensor[(2), float32]) { nn.relu(%y) }\n")
    return tmp_path


@pytest.mark.parametrize("argv,message", [
    (["missing.onnx"], "no ONNX model file at 'missing.onnx'"),
    (["text.onnx"], "'text.onnx' is not a readable ONNX model"),
    (["empty.onnx"], "'empty.onnx' is not an ONNX model (it holds no graph)"),
    (["model.bin"], "cannot tell the format of model.bin from its suffix; pass --model-format onnx or relay"),
    (["bad.relay"], "bad.relay: "),
    (["bad.relay", "--input-shapes", "x:[2]"], "--input-shapes applies to ONNX models"),
    (["{model}", "--input-shapes", "data:[1,3,x,8]"], "input 'data': dimension 'x' is not a positive integer"),
    (["{model}", "--input-shapes", "data=[1,3,8,8]"], "--input-shapes: cannot read 'data=[1,3,8,8]'"),
    (["{model}", "--input-shapes", "image:[1,3,8,8]"], "input shapes name 'image', which the model does not have"),
    (["{model}", "--target", "cuda"], "target kind 'cuda' is not supported"),
    (["{model}", "--target", "llvm -mcpu=nosuchcpu"], "unknown CPU -mcpu=nosuchcpu"),
    (["{model}", "--disabled-pass", "FuseOps,NoSuchPass"], "unknown pass 'NoSuchPass'"),
    (["{model}", "--pass-config", "no.such.key=1"], "unknown key 'no.such.key'"),
    (["{model}", "--dump-code", "relay,ptx"], "--dump-code: unknown format 'ptx'"),
    (["{model}", "--dump-code", "c"], "--dump-code c: the target llvm"),
    (["{model}", "--tuning-records", "missing.json"], "--tuning-records: no such file missing.json"),
])
def test_bad_input_is_one_line(capsys, monkeypatch, bad_files, tiny_model, argv, message):
    monkeypatch.chdir(bad_files)
    code = main(["compile", *(a.format(model=tiny_model) for a in argv), "-o", "out.tar"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and err.startswith("kiln compile: error: "), err
    assert message in err
    assert not (bad_files / "out.tar").exists()


def test_output_directory_must_exist(capsys, tiny_model, tmp_path):
    code = main(["compile", tiny_model, "-o", str(tmp_path / "missing" / "m.tar")])
    err = capsys.readouterr().err
    assert code == 1 and err == f"kiln compile: error: --output {tmp_path}/missing/m.tar: the directory " \
                                f"{tmp_path}/missing does not exist\n"


def test_verbose_shows_the_traceback(capsys, tmp_path):
    code = main(["compile", str(tmp_path / "missing.onnx"), "--verbose"])
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("Traceback (most recent call last):")
    assert err.splitlines()[-1].startswith("kiln compile: error: no ONNX model file at")
