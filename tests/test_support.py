"""kiln.support.libinfo: TVM's build flags describing what kiln can do."""

import importlib.util

import kiln


def test_libinfo_reports_the_cpu_backends_and_no_accelerators():
    info = kiln.support.libinfo()
    assert info["USE_LLVM"] == ("ON" if importlib.util.find_spec("llvmlite") else "OFF")
    assert info["USE_MICRO"] == "OFF" and info["USE_CUDA"] == "OFF" and info["USE_DNNL"] == "OFF"
    assert not kiln.get_global_func("relay.ext.dnnl", allow_missing=True)  # consistent with the flag
