"""What a measurement takes and gives (TVM's ``autotvm/measure/measure.py``): :class:`MeasureInput`,
:class:`MeasureResult`, the error codes, and the builder and runner interfaces.

These record types sit at the dispatch contexts' layer (records are decoded into them); the builders and runners
that fill them (:mod:`.local`, :mod:`.ray_runner`) and ``measure_option`` (:mod:`.option`) sit above Relay.
"""

import enum
from dataclasses import dataclass, field

__all__ = ["MeasureInput", "MeasureResult", "MeasureErrorNo", "BuildResult", "Builder", "Runner"]


class MeasureErrorNo(enum.IntEnum):
    """Why a measurement failed (TVM's codes)."""

    NO_ERROR = 0
    INSTANTIATION_ERROR = 1  # the template rejected the config
    COMPILE_HOST = 2  # lowering or code generation failed
    COMPILE_DEVICE = 3
    RUNTIME_DEVICE = 4  # the kernel crashed or raised
    WRONG_ANSWER = 5  # its output differs from the default config's
    BUILD_TIMEOUT = 6
    RUN_TIMEOUT = 7
    UNKNOWN_ERROR = 8


@dataclass(frozen=True)
class MeasureInput:
    """One candidate: a config of a task on a target (indexable and unpackable as TVM's namedtuple)."""

    target: object
    task: object
    config: object

    def __iter__(self):
        return iter((self.target, self.task, self.config))

    def __getitem__(self, index):
        return (self.target, self.task, self.config)[index]


@dataclass(frozen=True)
class MeasureResult:
    """What measuring a candidate gave.

    Attributes
    ----------
    costs : tuple of float
        Seconds per run, one per repeat (empty on error).
    error_no : int
        A :class:`MeasureErrorNo`.
    all_cost : float
        Seconds the whole measurement took (building included).
    timestamp : float
        When it finished (Unix time).
    error_msg : str
        What went wrong ("" on success).
    """

    costs: tuple
    error_no: int
    all_cost: float
    timestamp: float
    error_msg: str = ""

    @property
    def mean_cost(self) -> float:
        """Mean seconds per run (infinite on error)."""
        return sum(self.costs) / len(self.costs) if self.error_no == 0 and self.costs else float("inf")


@dataclass
class BuildResult:
    """A built candidate: the library's path, or the error that stopped the build."""

    filename: str | None
    error_no: int = 0
    error_msg: str = ""
    time_cost: float = 0.0
    built: dict | None = None  # what the runner needs: path, argument shapes and dtypes


@dataclass
class Builder:
    """Compiles candidates (base class): ``build(inputs) -> [BuildResult]``."""

    timeout: float = 10
    n_parallel: int | None = None
    task: object = field(default=None, repr=False)

    def set_task(self, task):
        """Prepare for measuring ``task``."""
        self.task = task

    def build(self, measure_inputs):
        raise NotImplementedError


@dataclass
class Runner:
    """Runs and times built candidates (base class): ``run(inputs, build_results) -> [MeasureResult]``."""

    timeout: float = 10
    number: int = 4
    repeat: int = 3
    min_repeat_ms: float = 0
    task: object = field(default=None, repr=False)

    builds_remotely = False  # True: run() builds the candidates itself (the builder is not used)

    def set_task(self, task):
        """Prepare for measuring ``task`` (a runner computes the default config's output here)."""
        self.task = task

    def run(self, measure_inputs, build_results):
        raise NotImplementedError
