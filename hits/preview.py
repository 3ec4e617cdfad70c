"""What a new batch would cost, before it exists: the batch form's and the API's preview.

The preview plans the batch with ``hits.services.planning.batch_plan``, the very code
``hits_generate`` writes from, so the HITs and assignments it prices are those creation makes
(unless another batch takes some of the work in between). Nothing is written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from annotation.models import Benchmark
from crowds.interface import get_backend
from crowds.interface.costs import CostEstimate
from hits.selectors.timing import benchmark_median_seconds
from hits.services.planning import batch_plan


@dataclass(frozen=True)
class BatchPreview:
    """The batch ``hits_generate`` would create with the same arguments, in figures."""

    step: int
    backend: str
    targets: int
    assignments_per_hit: int
    cost: CostEstimate
    # Whether the crowd takes a fee (a paid crowd: MTurk) or not (the local queue).
    with_fee: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "backend": self.backend,
            "targets": self.targets,
            "assignments_per_hit": self.assignments_per_hit,
            "with_fee": self.with_fee,
            **self.cost.as_dict(),
            "cost_per_assignment": None
            if self.cost.cost_per_assignment is None
            else str(self.cost.cost_per_assignment),
        }


def batch_preview(*, benchmark: Benchmark, median_seconds: float | None = None, **arguments: Any) -> BatchPreview:
    """Plan the batch that ``hits_generate(benchmark=..., **arguments)`` would create and price it:
    HITs, assignments, rewards, the crowd's fees (none on the local queue) and the hourly pay at the
    benchmark's measured median time per assignment (``median_seconds`` overrides it).

    Raises ``HitsGenerationError`` exactly where creation would, with the same message.
    """
    arguments.pop("created_by", None)
    plan = batch_plan(benchmark=benchmark, **arguments)
    seconds = (
        median_seconds if median_seconds is not None else benchmark_median_seconds(benchmark=benchmark, step=plan.step)
    )
    with_fee = get_backend(plan.backend).remote
    return BatchPreview(
        step=plan.step,
        backend=plan.backend,
        targets=plan.targets,
        assignments_per_hit=plan.assignments_per_hit,
        cost=get_backend(plan.backend).price(
            assignments_per_hit=plan.hit_assignments, reward=plan.reward, seconds_per_assignment=seconds
        ),
        with_fee=with_fee,
    )


@dataclass(frozen=True)
class PreviewPanel:
    """What a room above this one shows under a batch's preview (the budget planner): a template
    and its context, the template reading it as ``panel``."""

    template: str
    context: dict[str, Any]


#: Makes a panel for a benchmark's batch preview, or None when it has nothing to show.
PanelProvider = Callable[[Benchmark, BatchPreview], PreviewPanel | None]
_PANELS: list[PanelProvider] = []


def register_preview_panel(provider: PanelProvider) -> None:
    """Add a panel to every batch preview (registered once, from an app's ``ready``)."""
    if provider not in _PANELS:
        _PANELS.append(provider)


def preview_panels(*, benchmark: Benchmark, preview: BatchPreview) -> list[PreviewPanel]:
    """The registered panels that have something to show for this preview, in registration order."""
    return [panel for provider in _PANELS if (panel := provider(benchmark, preview)) is not None]
