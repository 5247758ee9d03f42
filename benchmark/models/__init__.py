"""The benchmark app's models, one module per benchmark over the abstract run and work item of base.py.
Django registers them from here; import them from here too (`from benchmark.models import CsRun`)."""

from .base import Run, WorkItem
from .codeswitch import CsDataset, CsImportProblem, CsJudgement, CsQuestion, CsResult, CsRun, CsUtterance
from .entity import BenchmarkRun, Clip, Dataset, EntitySpan, Hypothesis, ImportProblem, SpanHit

__all__ = [
    "BenchmarkRun", "Clip", "CsDataset", "CsImportProblem", "CsJudgement", "CsQuestion", "CsResult", "CsRun",
    "CsUtterance", "Dataset", "EntitySpan", "Hypothesis", "ImportProblem", "Run", "SpanHit", "WorkItem",
]  # fmt: skip
