"""The figures of a benchmark's researcher pages that change while a crowd works, as the pages
show them: the benchmark page, the pipeline page and the flagged-workers page poll them
(``static/crowdlex/live.js``) and write each figure into the element that names its key.

Texts are formatted here exactly as the templates format them, so a refresh changes what changed
and nothing else. ``bars`` are percentages for the progress bars of the same keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from annotation.models import Benchmark
from annotation.selectors import benchmark_counts
from review.selectors import active_flag_counts, pipeline_progress


@dataclass
class LiveFigures:
    figures: dict[str, str] = field(default_factory=dict)
    bars: dict[str, int] = field(default_factory=dict)
    # Parts of a page rendered anew, by key (the benchmark page's batches table: rows come and go).
    parts: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"figures": self.figures, "bars": self.bars, "parts": self.parts}


def benchmark_live_figures(*, benchmark: Benchmark) -> LiveFigures:
    live = LiveFigures()
    for name, count in benchmark_counts(benchmark=benchmark).items():
        live.figures[f"counts.{name}"] = str(count)
    progress = pipeline_progress(benchmark=benchmark, with_targets=False)
    for step in progress.steps:
        key = f"step{step.step}"
        live.figures[f"{key}.labels"] = f"{step.labels_collected} / {step.labels_needed}"
        live.figures[f"{key}.hits"] = str(step.hits)
        live.figures[f"{key}.open_slots"] = str(step.open_slots)
        live.figures[f"{key}.candidates"] = str(step.candidates)
        live.figures[f"{key}.waiting"] = str(step.waiting)
        live.bars[key] = step.percent
    for stage, count in progress.targets_by_stage.items():
        live.figures[f"targets.{stage}"] = str(count)
    for stage, count in progress.candidates_by_stage.items():
        live.figures[f"candidates.{stage}"] = str(count)
    for status, count in progress.assignments.items():
        live.figures[f"assignments.{status}"] = str(count)
    live.figures["flags.workers"] = str(active_flag_counts(benchmark=benchmark)["workers"])
    return live
