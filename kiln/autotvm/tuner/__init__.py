"""kiln.autotvm.tuner: search strategies over a task's config space (TVM's ``autotvm.tuner``)."""

from .ga_tuner import GATuner
from .index_based_tuner import GridSearchTuner, RandomTuner
from .task_scheduler import TaskScheduler
from .tuner import Tuner
from .xgboost_tuner import XGBTuner

__all__ = ["Tuner", "RandomTuner", "GridSearchTuner", "GATuner", "XGBTuner", "TaskScheduler"]
