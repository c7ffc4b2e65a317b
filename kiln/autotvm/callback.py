"""Callbacks a tuner calls after each batch of measurements (TVM's ``autotvm/tuner/callback.py``):
``callback(tuner, inputs, results)``."""

import time

from .record import encode

__all__ = ["log_to_file", "progress_bar"]


def log_to_file(file_out, protocol="json"):
    """A callback appending each measurement to ``file_out`` (a path or an open file) as a JSON-lines record
    (:mod:`kiln.autotvm.record`)."""
    if protocol != "json":
        raise ValueError(f"log_to_file: protocol {protocol!r} is not supported (json)")

    def callback(tuner, inputs, results):
        lines = "".join(encode(inp, res) + "\n" for inp, res in zip(inputs, results, strict=True))
        if isinstance(file_out, str) or hasattr(file_out, "__fspath__"):
            with open(file_out, "a") as f:
                f.write(lines)
        else:
            file_out.write(lines)
            file_out.flush()

    return callback


class _Progress:
    """A tqdm bar over the trials of one tuning run, showing the task's best GFLOP/s."""

    def __init__(self, total, prefix, si_prefix):
        from tqdm import tqdm  # optional dependency (kiln[tune]); only needed once a bar is drawn

        self.scale = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}.get(si_prefix, 1e9)
        self.si_prefix = si_prefix
        self.bar = tqdm(total=total, desc=prefix, unit="trial", leave=True, dynamic_ncols=True)
        self.errors = 0
        self.start = time.time()

    def __call__(self, tuner, inputs, results):
        self.errors += sum(1 for r in results if r.error_no)
        self.bar.update(len(results))
        best = tuner.best_flops / self.scale
        self.bar.set_postfix_str(f"best {best:.2f} {self.si_prefix}FLOP/s, {self.errors} errors")
        if self.bar.n >= self.bar.total:
            self.bar.close()


def progress_bar(total, prefix="", si_prefix="G"):
    """A callback drawing a progress bar (tqdm) of ``total`` trials with the best FLOP/s so far (TVM's
    ``autotvm.callback.progress_bar``)."""
    return _Progress(total, prefix, si_prefix)
