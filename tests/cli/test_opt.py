"""Tests of kiln/cli/opt.py: ``kiln opt`` reads Relay text, runs a textual pipeline, prints the result; bad input is one
line on stderr and a non-zero exit."""

import io
import subprocess
import sys
from importlib import metadata

import numpy as np
import pytest

from kiln import relay
from kiln.cli import main
from kiln.ir.transform import register_pass
from kiln.relay.transform import function_pass
from kiln.transform import module_pass

MODULE = """\
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = add(%x, %x);
  nn.relu(%0)
}
"""


@register_pass("TestCli.MakeIllTyped")
def make_ill_typed():
    # a module pass: a function pass's result is typed as it returns, which would report the error before
    # --verify-each does
    @module_pass(opt_level=0, name="TestCli.MakeIllTyped")
    def run(mod, ctx):
        out = mod.shallow_copy()
        out["main"] = mod["main"].with_fields(body=relay.add(mod["main"].body,
                                                             relay.const(np.ones((4, 5), "float32"))))
        return out

    return run


@register_pass("TestCli.DropRelu")
def drop_relu():
    @function_pass(opt_level=0, name="TestCli.DropRelu")
    def run(func, mod, ctx):
        return func.with_fields(body=func.body.args[0])

    return run


@pytest.fixture
def module_file(tmp_path):
    path = tmp_path / "model.relay"
    path.write_text(MODULE)
    return str(path)


def run_cli(capsys, *argv):
    code = main(["opt", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_runs_pipeline_and_prints_result(capsys, module_file):
    code, out, err = run_cli(capsys, module_file, "-p", "InferType", "--opt-level", "3")
    assert code == 0 and err == ""
    result = relay.parse(out)
    assert result["main"].ret_type == relay.TensorType((2, 3))
    assert "ty=Tensor[(2, 3), float32]" in out


def test_reads_stdin_and_writes_output_file(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "stdin", io.StringIO(MODULE))
    target = tmp_path / "out.relay"
    code, out, _ = run_cli(capsys, "-p", "InferType", "-o", str(target))
    assert code == 0 and out == ""
    assert relay.parse(target.read_text())["main"].ret_type == relay.TensorType((2, 3))


def test_no_pipeline_round_trips_the_module(capsys, module_file):
    code, out, _ = run_cli(capsys, module_file)
    assert code == 0 and str(relay.parse(out)) == str(relay.parse(MODULE))


@pytest.mark.parametrize(
    "argv,message",
    [
        (["-p", "InferType,NoSuchPass"], "unknown pass 'NoSuchPass'"),
        (["-p", "InferType,,PrintIR"], "malformed pipeline"),
        (["-p", "PrintIR(colour=1)"], "PrintIR has no option 'colour'"),
        (["--pass-config", "transform.max_passes=many"], "'transform.max_passes' expects a value of type int"),
        (["--pass-config", "no.such.key=1"], "unknown key 'no.such.key'"),
        (["--pass-config", "transform.max_passes"], "KEY=VALUE"),
    ],
)
def test_bad_input_is_one_line_and_nonzero(capsys, module_file, argv, message):
    code, out, err = run_cli(capsys, module_file, *argv)
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and err.startswith("kiln opt: error: ") and message in err


def test_unparsable_module_names_file_and_line(capsys, tmp_path):
    path = tmp_path / "bad.relay"
    path.write_text("def @main(%x: Tensor[(2, 3), float32]) {\n  nn.relu(%y)\n}\n")
    code, _, err = run_cli(capsys, str(path))
    assert code == 1 and err.count("\n") == 1 and f"{path}: line 2" in err and "%y" in err
    code, _, err = run_cli(capsys, str(tmp_path / "missing.relay"))
    assert code == 1 and "missing.relay" in err and err.count("\n") == 1


def test_usage_error_is_one_line(capsys):
    with pytest.raises(SystemExit) as info:
        main(["opt", "--no-such-flag"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.count("\n") == 1 and "--no-such-flag" in err


def test_help_documents_every_option(capsys):
    with pytest.raises(SystemExit) as info:
        main(["opt", "--help"])
    out = capsys.readouterr().out
    assert info.value.code == 0
    for option in ("--passes", "--opt-level", "--pass-config", "--required-pass", "--disabled-pass",
                   "--print-before-all", "--print-after-all", "--print-changed", "--time-passes", "--verify-each",
                   "--verify-semantics", "--opt-bisect-limit", "--print-passes", "--print-configs", "--output"):
        assert option in out


def test_print_passes_and_configs(capsys):
    code, out, _ = run_cli(capsys, "--print-passes")
    assert code == 0 and "InferType" in out.splitlines() and "PrintIR(header='', show_meta_data=False)" in out
    code, out, _ = run_cli(capsys, "--print-configs")
    assert code == 0 and "transform.max_passes: int (default -1)" in out


def test_instruments_print_to_stderr(capsys, module_file):
    code, out, err = run_cli(capsys, module_file, "-p", "InferType,PrintIR", "--time-passes", "--print-after-all")
    assert code == 0 and relay.parse(out)  # stdout holds only the module
    assert "After Running Pass" in err and "PrintIR():" in err
    assert any(line.startswith("\tInferType: ") for line in err.splitlines())


def test_print_changed_shows_a_diff(capsys, module_file):
    code, _, err = run_cli(capsys, module_file, "-p", "PrintIR,InferType,FuseOps(fuse_opt_level=2)", "--print-changed")
    # the parsed module is typed already, so only FuseOps changes it
    assert code == 0 and "--- before FuseOps" in err and "before PrintIR" not in err and "before InferType" not in err


def test_verify_each_names_the_broken_pass(capsys, module_file):
    code, out, err = run_cli(capsys, module_file, "-p", "InferType,TestCli.MakeIllTyped", "--verify-each")
    assert code == 1 and out == "" and err.count("\n") == 1
    assert "pass TestCli.MakeIllTyped produced IR that is not well formed" in err


def test_verify_semantics_names_the_broken_pass(capsys, module_file):
    code, _, err = run_cli(capsys, module_file, "-p", "InferType,PrintIR,TestCli.DropRelu", "--verify-semantics")
    assert code == 1 and "pass TestCli.DropRelu changed the result of @main" in err


def test_opt_bisect_limit(capsys, module_file):
    code, out, err = run_cli(capsys, module_file, "-p", "InferType,TestCli.DropRelu", "--opt-bisect-limit", "1")
    assert code == 0 and "nn.relu" in out
    assert "BISECT: running pass (1) InferType on module" in err
    assert "BISECT: NOT running pass (2) TestCli.DropRelu on function (@main)" in err


def test_console_script_is_declared_and_runs():
    scripts = {ep.name: ep.value for ep in metadata.entry_points(group="console_scripts")}
    assert scripts.get("kiln") == "kiln.cli:main"
    done = subprocess.run([sys.executable, "-m", "kiln.cli", "opt", "-p", "Nope"], input=MODULE,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stderr.startswith("kiln opt: error: unknown pass 'Nope'")


def test_fuse_ops_with_pass_config(capsys, module_file):
    code, out, err = run_cli(capsys, module_file, "-p", "InferType,FuseOps(fuse_opt_level=2)", "-O", "3",
                             "--pass-config", "relay.FuseOps.max_depth=4", "--verify-each", "--verify-semantics")
    assert code == 0 and err == ""
    fused = relay.parse(out)["main"].body.op
    assert fused.attrs["Primitive"] == 1
    code, out, err = run_cli(capsys, module_file, "-p", "FuseOps", "--pass-config", "relay.FuseOps.max_depth=deep")
    assert code == 1 and err.count("\n") == 1 and "relay.FuseOps.max_depth" in err
