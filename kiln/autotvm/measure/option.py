"""``measure_option`` (a builder paired with a runner) and the measuring function tuners call."""

from ...error import KilnError
from .local import LocalBuilder, LocalRunner
from .measure import Builder, Runner

__all__ = ["measure_option", "create_measure_batch"]


def measure_option(builder="local", runner="local"):
    """How tuners measure candidates (TVM's ``autotvm.measure_option``).

    Parameters
    ----------
    builder : Builder or "local"
        ``autotvm.LocalBuilder(n_parallel=None, timeout=10)`` by default.
    runner : Runner or "local"
        ``autotvm.LocalRunner(number=4, repeat=3, timeout=10, min_repeat_ms=0)`` by default, or
        ``autotvm.RayRunner(...)``.

    Returns
    -------
    option : dict
        ``{"builder": ..., "runner": ...}``.

    Examples
    --------
    >>> option = autotvm.measure_option(builder=autotvm.LocalBuilder(timeout=10),
    ...                                 runner=autotvm.LocalRunner(number=4, repeat=3))
    """
    if builder == "local":
        builder = LocalBuilder()
    if runner == "local":
        runner = LocalRunner()
    if not isinstance(builder, Builder):
        raise KilnError(f"autotvm.measure_option: builder must be a Builder or 'local', got {builder!r}")
    if not isinstance(runner, Runner):
        raise KilnError(f"autotvm.measure_option: runner must be a Runner or 'local', got {runner!r}")
    return {"builder": builder, "runner": runner}


def create_measure_batch(task, option):
    """A function measuring a list of MeasureInputs of ``task`` with ``option``'s builder and runner (a runner
    that builds remotely, such as RayRunner, is given no build results)."""
    builder, runner = option["builder"], option["runner"]
    builder.set_task(task)
    runner.set_task(task)

    def measure_batch(measure_inputs):
        if runner.builds_remotely:
            return runner.run(measure_inputs, None)
        return runner.run(measure_inputs, builder.build(measure_inputs))

    return measure_batch
