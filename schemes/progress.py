"""What the review room asks of a scheme beside collection (``schemes.base.AnnotationScheme``): its
progress per step and per target, what a refresh moves, as plain values; and the rules one-step
schemes share (a target whose item is the target itself, done when its work is collected).

Pure: the review room reads what the HITs hold (``CollectedWork``) and writes what the scheme
decides (``StageMoves``); a scheme reads only ``annotation``'s models.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from crowdlex.pickled import pickled_by_fields

if TYPE_CHECKING:
    from schemes.steps import Step


@dataclass(frozen=True)
class CollectedWork:
    """What the benchmark's HITs hold, as plain values the review room reads for a scheme (a scheme
    reads only ``annotation``'s models itself). Keys are target ids and step numbers.

    ``valid_assignments``: (target, step) -> valid submitted assignments (confirmed, not filtered);
    ``required_assignments``: (target, step) -> assignments the target's HITs of the step require,
    summed over the batches not closed (a later batch asks for more); ``open_candidates`` /
    ``open_targets``: step -> candidate / target ids that a batch of the step, not closed, holds;
    ``reserved``: worker id -> target ids whose HITs are reserved for them (schemes whose work goes
    to named annotators), with ``worker_names`` the names researchers see.
    """

    valid_assignments: Mapping[tuple[int, int], int] = dataclasses.field(default_factory=dict)
    required_assignments: Mapping[tuple[int, int], int] = dataclasses.field(default_factory=dict)
    open_candidates: Mapping[int, frozenset[int]] = dataclasses.field(default_factory=dict)
    open_targets: Mapping[int, frozenset[int]] = dataclasses.field(default_factory=dict)
    reserved: Mapping[int, frozenset[int]] = dataclasses.field(default_factory=dict)
    worker_names: Mapping[int, str] = dataclasses.field(default_factory=dict)


@dataclass
class StepCount:
    """One step's progress in the scheme's words: ``collected`` of ``needed`` ``unit`` (capped per
    item at what the step needs, so over-collection on one item never hides a shortfall on another)
    over ``items`` ``item_noun``; ``waiting`` items of the step (``waiting_noun``) lack work and sit
    in no open batch of it: what a new batch would take."""

    step: int
    title: str
    unit: str
    item_noun: str
    collected: int = 0
    needed: int = 0
    items: int = 0
    waiting: int = 0
    waiting_noun: str = ""


@pickled_by_fields
@dataclass
class TargetCount:
    """One target's progress: its candidates (excluded ones left out), ``steps``: step -> (collected,
    needed), or None for a step the target has not reached; ``counts``: the scheme's own figures by
    the names of ``SchemeProgress.target_columns``."""

    candidates: int = 0
    steps: dict[int, tuple[int, int] | None] = dataclasses.field(default_factory=dict)
    counts: dict[str, int] = dataclasses.field(default_factory=dict)
    # The target's share of the benchmark's figures, for schemes whose progress is a sum over
    # targets (``AnnotationScheme.progress_by_target``; docs/design.md §7, "Incremental figures"):
    # step -> (collected, needed, items, waiting), its candidates by stage, and its cells of each
    # table by table title and row name.
    totals: dict[int, tuple[int, int, int, int]] = dataclasses.field(default_factory=dict)
    candidate_stages: dict[str, int] = dataclasses.field(default_factory=dict)
    table_cells: dict[str, dict[str, tuple[int, ...]]] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class ProgressTable:
    """A table of the scheme's own progress figures: ``rows`` of (name, one number per column)
    (ProLex's experts with the substitutes each judged and still has to judge)."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, tuple[int, ...]], ...]


@dataclass
class SchemeProgress:
    """A benchmark's progress as its scheme counts it (``AnnotationScheme.progress``)."""

    steps: list[StepCount]
    targets: dict[int, TargetCount]
    candidates_by_stage: dict[str, int]
    # The names of ``TargetCount.counts``, in the order the target table shows them.
    target_columns: tuple[str, ...] = ()
    tables: list[ProgressTable] = dataclasses.field(default_factory=list)
    # A sentence saying how the steps collect, for the top of the pipeline page.
    summary: str = ""


def target_counts_summed(counts: Iterable[TargetCount]) -> TargetCount:
    """Targets' shares of the benchmark's figures (``TargetCount.totals``, ``candidate_stages``,
    ``table_cells``) summed: over targets, or over such sums (a bucket of targets each). Pure."""
    totals: dict[int, list[int]] = {}
    stages: dict[str, int] = {}
    cells: dict[str, dict[str, list[int]]] = {}
    for target in counts:
        for step, (collected, needed, items, waiting) in target.totals.items():
            summed = totals.setdefault(step, [0, 0, 0, 0])
            summed[0] += collected
            summed[1] += needed
            summed[2] += items
            summed[3] += waiting
        for stage, count in target.candidate_stages.items():
            stages[stage] = stages.get(stage, 0) + count
        for title, rows in target.table_cells.items():
            for name, values in rows.items():
                row = cells.setdefault(title, {}).setdefault(name, [0] * len(values))
                for index, value in enumerate(values):
                    row[index] += value
    return TargetCount(
        totals={step: (summed[0], summed[1], summed[2], summed[3]) for step, summed in sorted(totals.items())},
        candidate_stages=dict(sorted(stages.items())),
        table_cells={title: {name: tuple(row) for name, row in rows.items()} for title, rows in cells.items()},
    )


@dataclass
class CountsSum:
    """Targets' shares of the benchmark's figures (``TargetCount.totals``, ``candidate_stages``,
    ``table_cells``) summed, with how many of the targets hold each figure: by figure (``(0, step)``,
    ``(1, stage)``, ``(2, table title, row name)``), that number followed by the figure's values.
    Whole numbers, so a target's share taken out of the sum (``counts_sum_less``) leaves exactly the
    sum of the others, down to which figures any target holds (``counts_sum_total``): kept beside
    the targets' shares, a change takes out the shares of the targets it touched and adds their new
    ones, and reads no other target's (docs/design.md §7, "Incremental figures")."""

    figures: dict[tuple[Any, ...], list[int]] = dataclasses.field(default_factory=dict)


def _entry_added(
    figures: dict[tuple[Any, ...], list[int]], key: tuple[Any, ...], entry: Sequence[int], sign: int
) -> None:
    """Add ``entry`` (the targets holding the figure, then its values) to the figure ``key``, or
    take it out of it (``sign`` -1)."""
    summed = figures.get(key)
    if summed is None:
        summed = figures[key] = [0] * len(entry)
    for index, value in enumerate(entry):
        summed[index] += sign * value


def _target_added(figures: dict[tuple[Any, ...], list[int]], target: TargetCount, sign: int) -> None:
    for step, values in target.totals.items():
        _entry_added(figures, (0, step), (1, *values), sign)
    for stage, count in target.candidate_stages.items():
        _entry_added(figures, (1, stage), (1, count), sign)
    for title, rows in target.table_cells.items():
        for name, cells in rows.items():
            _entry_added(figures, (2, title, name), (1, *cells), sign)


def counts_sum(counts: Iterable[TargetCount]) -> CountsSum:
    """Targets' shares summed exactly (``CountsSum``). Pure."""
    figures: dict[tuple[Any, ...], list[int]] = {}
    for target in counts:
        _target_added(figures, target, 1)
    return CountsSum(figures)


def counts_sums_combined(sums: Iterable[CountsSum]) -> CountsSum:
    """Exact sums of targets' shares added together. Pure."""
    figures: dict[tuple[Any, ...], list[int]] = {}
    for each in sums:
        for key, entry in each.figures.items():
            _entry_added(figures, key, entry, 1)
    return CountsSum(figures)


def counts_sum_less(total: CountsSum, counts: Iterable[TargetCount]) -> CountsSum:
    """``total`` with the targets' shares ``counts`` taken out of it, exactly. Pure."""
    figures = {key: list(entry) for key, entry in total.figures.items()}
    for target in counts:
        _target_added(figures, target, -1)
    return CountsSum(figures)


def counts_sum_total(total: CountsSum) -> TargetCount:
    """The exact sum as ``target_counts_summed`` gives it of the same targets: the figures no target
    holds left out. Pure."""
    totals: dict[int, tuple[int, int, int, int]] = {}
    stages: dict[str, int] = {}
    cells: dict[str, dict[str, tuple[int, ...]]] = {}
    for key, entry in total.figures.items():
        if entry[0] <= 0:
            continue
        if key[0] == 0:
            totals[key[1]] = (entry[1], entry[2], entry[3], entry[4])
        elif key[0] == 1:
            stages[key[1]] = entry[1]
        else:
            cells.setdefault(key[1], {})[key[2]] = tuple(entry[1:])
    return TargetCount(
        totals=dict(sorted(totals.items())), candidate_stages=dict(sorted(stages.items())), table_cells=cells
    )


def progress_from_total(
    empty: SchemeProgress, total: TargetCount, targets: Mapping[int, TargetCount] | None = None
) -> SchemeProgress:
    """A benchmark's progress from its targets' shares summed (``target_counts_summed``): ``empty``
    is the scheme's progress of no target (its steps, columns, tables and summary, every figure 0);
    ``targets``, the targets' own rows it holds (none when not given). Pure."""
    steps = [dataclasses.replace(step) for step in empty.steps]
    for step in steps:
        collected, needed, items, waiting = total.totals.get(step.step, (0, 0, 0, 0))
        step.collected += collected
        step.needed += needed
        step.items += items
        step.waiting += waiting
    stages = dict(empty.candidates_by_stage)
    for stage, count in total.candidate_stages.items():
        stages[stage] = stages.get(stage, 0) + count
    cells: dict[str, dict[str, list[int]]] = {table.title: {} for table in empty.tables}
    for table in empty.tables:
        for name, values in table.rows:
            cells[table.title][name] = list(values)
    for title, rows in total.table_cells.items():
        for name, values in rows.items():
            row = cells.setdefault(title, {}).setdefault(name, [0] * len(values))
            for index, value in enumerate(values):
                row[index] += value
    tables = [
        dataclasses.replace(table, rows=tuple((name, tuple(row)) for name, row in sorted(cells[table.title].items())))
        for table in empty.tables
    ]
    return dataclasses.replace(
        empty, steps=steps, targets=dict(targets or {}), candidates_by_stage=stages, tables=tables
    )


def progress_from_targets(empty: SchemeProgress, targets: Mapping[int, TargetCount]) -> SchemeProgress:
    """A benchmark's progress summed from its targets' shares (``TargetCount.totals``,
    ``candidate_stages``, ``table_cells``): ``empty`` is the scheme's progress of no target (its
    steps, columns, tables and summary, every figure 0). Pure."""
    return progress_from_total(empty, target_counts_summed(targets.values()), targets)


class StageMove(NamedTuple):
    """Rows of ``what`` ("target" or "candidate") whose stored stage moves from ``old`` to ``new``;
    applied as a conditional update, in the order given."""

    what: str
    old: str
    new: str
    ids: tuple[int, ...]


@dataclass
class StageMoves:
    """What a refresh moves (``AnnotationScheme.advancement``): the stage changes, the targets that
    went on to a later step (``advanced``), finished (``done``) or lack work again (``reopened``),
    and those a follow-up batch of ``AnnotationScheme.followup_step`` must collect (``followup``).
    Empty for a scheme whose targets need no moving."""

    moves: list[StageMove] = dataclasses.field(default_factory=list)
    advanced: list[int] = dataclasses.field(default_factory=list)
    done: list[int] = dataclasses.field(default_factory=list)
    reopened: list[int] = dataclasses.field(default_factory=list)
    followup: list[int] = dataclasses.field(default_factory=list)


TARGET = "target"
CANDIDATE = "candidate"

# The stored stages (``annotation.models.TargetStage`` / ``CandidateStage``), as strings so the
# pure rules need no Django: every scheme stores its targets' and candidates' stages in these.
STAGE_OPEN = "reduce"
STAGE_DONE = "done"
STAGE_EXCLUDED = "excluded"


def stage_name(names: Mapping[str, str], value: str) -> str:
    """A stored stage in a scheme's words (``target_stage_names`` / ``candidate_stage_names``); a
    value the scheme does not name is shown as stored."""
    return names.get(value, value)


def done_when_collected(
    stages: Mapping[int, str], complete: Callable[[int], bool], *, open_stage: str = STAGE_OPEN
) -> StageMoves:
    """The refresh of a one-step scheme whose targets are done when their work is collected: an open
    target whose work is ``complete`` becomes done, a done one that lacks work again (filtered,
    rejected, labels removed) opens again. Pure: ``stages`` is target id -> stored stage."""
    done = sorted(pk for pk, stage in stages.items() if stage == open_stage and complete(pk))
    reopened = sorted(pk for pk, stage in stages.items() if stage == STAGE_DONE and not complete(pk))
    moves = []
    if done:
        moves.append(StageMove(TARGET, open_stage, STAGE_DONE, tuple(done)))
    if reopened:
        moves.append(StageMove(TARGET, STAGE_DONE, open_stage, tuple(reopened)))
    return StageMoves(moves=moves, done=done, reopened=reopened)


def assignments_needed(work: CollectedWork, *, target_id: int, step: int, default: int) -> int:
    """Assignments a target whose item is the target itself needs in ``step``: what its HITs require
    (a batch may ask for more or fewer than the settings), else the scheme's ``default``."""
    return work.required_assignments.get((target_id, step)) or default


def target_item_progress(
    *,
    stages: Mapping[int, str],
    work: CollectedWork,
    step: Step,
    default: int,
    unit: str,
    item_noun: str,
    done_words: tuple[str, str],
    summary: str = "",
) -> SchemeProgress:
    """The progress of a one-step scheme whose item is the target itself (a sentence to mark, a target
    to propose for): per target, its valid assignments of the step, capped at what it needs
    (``assignments_needed``), and a table of the targets with all of them and those still lacking
    some, named by ``done_words`` (e.g. ("sentences marked", "sentences to mark"))."""
    count = StepCount(
        step.number, step.title, unit, item_noun, waiting_noun=f"{item_noun} lacking {unit} in no open batch"
    )
    targets: dict[int, TargetCount] = {}
    complete = 0
    held = work.open_targets.get(step.number, frozenset())
    title = item_noun.capitalize()
    for target_id in sorted(stages):
        needed = assignments_needed(work, target_id=target_id, step=step.number, default=default)
        got = min(needed, work.valid_assignments.get((target_id, step.number), 0))
        waiting = int(got < needed and target_id not in held)
        targets[target_id] = TargetCount(
            steps={step.number: (got, needed)},
            totals={step.number: (got, needed, 1, waiting)},
            table_cells={title: {item_noun: (int(got >= needed), int(got < needed))}},
        )
        count.collected += got
        count.needed += needed
        count.items += 1
        complete += got >= needed
        count.waiting += waiting
    table = ProgressTable(title=title, columns=done_words, rows=((item_noun, (complete, len(stages) - complete)),))
    return SchemeProgress(steps=[count], targets=targets, candidates_by_stage={}, tables=[table], summary=summary)


def target_item_moves(*, stages: Mapping[int, str], work: CollectedWork, step: int, default: int) -> StageMoves:
    """The refresh of a one-step scheme whose item is the target itself: a target is done when it has
    the valid assignments it needs (``assignments_needed``), open again when it lacks some."""

    def complete(target_id: int) -> bool:
        needed = assignments_needed(work, target_id=target_id, step=step, default=default)
        return work.valid_assignments.get((target_id, step), 0) >= needed

    return done_when_collected(stages, complete)
