"""Benchmarks of every scheme a benchmark may take, each holding collected work: targets, candidates
where the scheme has them, a batch of its main step and one submitted assignment. The page walks of
every scheme build their benchmarks here."""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

from annotation.models import Benchmark, Candidate, Context, Worker, scheme_choices
from hits.models import Batch, HITItem
from hits.services import assignment_claim_next, assignment_submit, hits_generate
from schemes import get_scheme
from schemes.base import SchemeSettings, main_step
from tests.base import Cast

_counter = itertools.count(1)

# Every scheme a benchmark may take (a scheme that only runs another's step, the generation task,
# has no benchmarks of its own).
BENCHMARK_SCHEMES = sorted(name for name, _ in scheme_choices())


def moved_settings(settings_type: type[SchemeSettings]) -> dict[str, Any]:
    """Every setting moved from its default, within its bounds: up where there is room, else down."""
    moved: dict[str, Any] = {}
    for field in dataclasses.fields(settings_type):
        default: Any = field.default
        low, high = field.metadata.get("minimum"), field.metadata.get("maximum")
        if isinstance(default, bool):
            moved[field.name] = not default
        elif isinstance(default, int):
            moved[field.name] = default + 1 if high is None or default + 1 <= high else default - 1
        elif isinstance(default, str):
            # A word setting moves to another of its choices.
            moved[field.name] = next(choice for choice in field.metadata["choices"] if choice != default)
        else:
            top = high if high is not None else default + 1.0
            bottom = low if low is not None else default - 1.0
            moved[field.name] = (default + top) / 2 if top > default else (default + bottom) / 2
    checked = settings_type.from_json(moved).to_json()
    defaults = settings_type().to_json()
    assert [name for name in checked if checked[name] == defaults[name]] == [], "every setting moved"
    return moved


def scheme_answer(scheme_name: str, item: HITItem) -> Any:
    """An answer each scheme accepts: its first choice, or four marked words, a simpler word, or two proposals."""
    scheme = get_scheme(scheme_name)
    if scheme.page.choices:
        return scheme.page.choices[0].value
    if scheme_name == "sws":
        # Four words marked (as many as the moved settings ask for), one with a long suggestion.
        marks = [(item.text.index(word), word) for word in ("cat", "sat", "mat", "afternoon")]
        return {
            "targets": [
                {
                    "start": start,
                    "end": start + len(word),
                    "suggestions": "perched; settled-comfortably-for-the-whole-afternoon" if word == "sat" else "one",
                    "type": "refine-usage" if index % 2 else "diversify-expression",
                }
                for index, (start, word) in enumerate(marks)
            ],
            "discard": "",
        }
    if scheme_name == "tsar":
        return {"substitute": "rested", "none": False}
    return {"substitutes": ["rested", "perched"], "none": False}


def scheme_benchmark(
    scheme_name: str,
    cast: Cast,
    *,
    settings: dict[str, Any] | None = None,
    sentences: tuple[str, ...] = (
        "The cat sat on mat number 0 all afternoon.",
        "The cat sat on mat number 1 all afternoon.",
    ),
    candidates: tuple[str, ...] = ("perched", "rested", "squatted"),
    title: str = "",
) -> tuple[Benchmark, Batch]:
    """A benchmark of ``scheme_name`` (``settings``: its scheme's settings, the defaults without) with a
    target "sat" per sentence (the whole sentence for SWS), ``candidates`` for each, a batch of the
    scheme's main step, and one assignment of it submitted by alice; the benchmark and that batch."""
    scheme = get_scheme(scheme_name)
    benchmark = Benchmark.objects.create(
        name=f"{scheme_name}-{next(_counter)}",
        title=title,
        scheme=scheme_name,
        scheme_settings=settings if settings is not None else {},
    )
    if settings is not None:
        # The settings are read as the benchmark's scheme reads them: no page may assume another's.
        assert scheme.settings(benchmark).to_json() == benchmark.scheme_settings
    for text in sentences:
        context = Context.objects.create(benchmark=benchmark, text=text)
        if scheme_name == "sws":
            context.targets.create(benchmark=benchmark, word=text, offset=0, pos="")
            continue
        target = context.targets.create(benchmark=benchmark, word="sat", offset=text.index("sat"), pos="verb")
        for word in candidates:
            Candidate.objects.create(target=target, text=word, sources=["thesaurus"])
    experts = [Worker.objects.get(user=cast.alice)] if scheme.assigned else None
    batch = hits_generate(benchmark=benchmark, step=main_step(scheme.steps), seed=1, annotators=experts)
    worker = Worker.objects.get(user=cast.alice)
    assignment = assignment_claim_next(worker=worker, benchmark=benchmark)
    assert assignment is not None, f"{scheme_name}: the annotator is offered work"
    items = HITItem.objects.filter(hit_id=assignment.hit_id)
    assignment_submit(assignment=assignment, answers={item.pk: scheme_answer(scheme_name, item) for item in items})
    return benchmark, batch
