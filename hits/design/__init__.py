"""Task design (docs/design.md §4.1, docs/batches.md "Task design"): a batch's instructions,
examples, listing and choices' labels and keys, a benchmark's template that new batches start from,
and the preview of a batch as its crowd's workers see it. One service per operation, called by the
pages, the API and the ``create_batch`` command."""

from hits.design.services import (
    DesignLocks,
    batch_design,
    batch_design_locks,
    batch_design_set,
    benchmark_pages,
    design_options,
    design_template,
    design_template_set,
    step_page,
)

__all__ = [
    "DesignLocks",
    "batch_design",
    "batch_design_locks",
    "batch_design_set",
    "benchmark_pages",
    "design_options",
    "design_template",
    "design_template_set",
    "step_page",
]
