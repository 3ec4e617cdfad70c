"""Moving a target, a context or a candidate to another benchmark or target (docs/design.md §2,
"Moving rows between benchmarks"): the admin's writers of a row's benchmark.

A row moves only while nothing but what moves with it names it: a target its candidates, a context
its targets (and theirs), a candidate its tally. Labels, HITs and their items, a split, an
adjudicator's resolution or override, a qualification item: each was made in the benchmark the
row belongs to (under its scheme, settings, reward and crowd), and is counted in that benchmark's
statistics and exports, so a row any of them names stays where it is and the move is refused,
saying which. What an import brought is let go: the moved rows leave the old benchmark's imports,
which no longer hold them (removing such an import leaves them be).

A move runs in one transaction: the rows locked, the refusal checked again under the locks, the
rows moved (the candidates' copy of their benchmark with them), and both benchmarks' change keys
moved, so every figure of both is computed again (docs/design.md §7, "Researcher pages").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.db import transaction
from django.db.models import Model

from annotation.changes import benchmark_changed
from annotation.models import Benchmark, Candidate, CandidateTally, Context, Import, Target, normalize_candidate


class MoveRefused(ValueError):
    """A move that would take a row away from what its benchmark made of it; the message says why."""


# What moves with a row of each model (its own rows follow it) or is let go (an import's record).
_MOVES_WITH: dict[type[Model], set[type[Model]]] = {
    Context: {Target},
    Target: {Candidate},
    Candidate: {CandidateTally},
}
_LET_GO = {Import, Import.contexts.through, Import.targets.through, Import.candidates.through}


def _named_by(model: type[Model], ids: Sequence[int]) -> str | None:
    """The first kind of row, other than those that move with ``model``'s rows or are let go, that
    names one of the rows ``ids`` (its plural name), or None. Every app's relations count, found
    through the model's reverse relations, so a model added later is covered too."""
    if not ids:
        return None
    for relation in model._meta.get_fields(include_hidden=True):
        if not (relation.auto_created and not relation.concrete and relation.is_relation):
            continue
        named = relation.related_model
        if named in _MOVES_WITH.get(model, set()) or named in _LET_GO:
            continue
        column = relation.field.attname  # type: ignore[union-attr]
        if named._default_manager.filter(**{f"{column}__in": list(ids)}).exists():  # type: ignore[union-attr]
            return str(named._meta.verbose_name_plural)  # type: ignore[union-attr]
    return None


def _held(*, targets: Sequence[int]) -> str | None:
    """What keeps these targets in their benchmark: rows naming them or their candidates."""
    candidates = list(Candidate.objects.filter(target_id__in=targets).values_list("pk", flat=True))
    return _named_by(Target, targets) or _named_by(Candidate, candidates)


def _name(benchmark_id: int) -> str:
    return str(Benchmark.objects.values_list("name", flat=True).get(pk=benchmark_id))


def target_move_refusal(*, target: Target) -> str | None:
    """Why ``target`` (holding its new benchmark and context, unsaved) may not move, or None."""
    stored = Target.objects.values_list("benchmark_id", flat=True).get(pk=target.pk)
    if stored == target.benchmark_id:
        return None
    context_benchmark = Context.objects.values_list("benchmark_id", flat=True).get(pk=target.context_id)
    if context_benchmark != target.benchmark_id:
        return (
            f"its context is one of {_name(context_benchmark)}'s: pick a context of "
            f"{_name(target.benchmark_id)} for it, or move its context, which takes its targets along"
        )
    held = _held(targets=[target.pk])
    return _stays(held, stored, "it or its candidates")


def _stays(held: str | None, benchmark_id: int, named: str) -> str | None:
    """The refusal of a move that what ``benchmark_id`` collected or decided holds back, or None."""
    if not held:
        return None
    return (
        f"{held} of {_name(benchmark_id)} name {named}: what was collected or decided in a benchmark "
        "stays in it (docs/design.md §2)"
    )


def context_move_refusal(*, context: Context) -> str | None:
    """Why ``context`` (holding its new benchmark, unsaved) may not move with its targets, or None."""
    stored = Context.objects.values_list("benchmark_id", flat=True).get(pk=context.pk)
    if stored == context.benchmark_id:
        return None
    twin = Context.objects.filter(benchmark_id=context.benchmark_id, digest=context.digest).values_list("pk", flat=True)
    if twin:
        return f"{_name(context.benchmark_id)} has this text already (context {twin[0]})"
    held = _named_by(Context, [context.pk]) or _held(
        targets=list(Target.objects.filter(context_id=context.pk).values_list("pk", flat=True))
    )
    return _stays(held, stored, "its targets or their candidates")


def candidate_move_refusal(*, candidate: Candidate) -> str | None:
    """Why ``candidate`` (holding its new target, unsaved) may not move to it, or None."""
    stored = Candidate.objects.values_list("target_id", flat=True).get(pk=candidate.pk)
    if stored == candidate.target_id:
        return None
    if Candidate.objects.filter(target_id=candidate.target_id, normalized=normalize_candidate(candidate.text)).exists():
        return "that target has this candidate already"
    held = _named_by(Candidate, [candidate.pk])
    if held:
        return f"{held} name it: they judged it as a substitute for its target, so it stays with it"
    return None


def _locked(rows: Iterable[tuple[type[Model], Sequence[int]]]) -> None:
    """Lock these rows, each model's in id order, until the transaction ends."""
    for model, ids in rows:
        list(model._default_manager.select_for_update().filter(pk__in=list(ids)).order_by("pk").values_list("pk"))


def _let_go(*, contexts: Sequence[int] = (), targets: Sequence[int] = (), candidates: Sequence[int] = ()) -> None:
    """The moved rows leave the imports that brought them."""
    Import.contexts.through.objects.filter(context_id__in=list(contexts)).delete()
    Import.targets.through.objects.filter(target_id__in=list(targets)).delete()
    Import.candidates.through.objects.filter(candidate_id__in=list(candidates)).delete()


def _carry(*, targets: Sequence[int], benchmark_id: int) -> list[int]:
    """The candidates of these targets take their benchmark (PostgreSQL's key has carried them
    already; SQLite keeps no key); their ids."""
    Candidate.objects.filter(target_id__in=list(targets)).exclude(benchmark_id=benchmark_id).update(
        benchmark_id=benchmark_id
    )
    return list(Candidate.objects.filter(target_id__in=list(targets)).values_list("pk", flat=True))


def target_move(*, target: Target) -> None:
    """Save ``target``, given another benchmark (and a context of it), with its candidates; refused
    (``MoveRefused``) by ``target_move_refusal``. Both benchmarks' figures are computed again."""
    with transaction.atomic():
        old = Target.objects.select_for_update().values_list("benchmark_id", flat=True).get(pk=target.pk)
        _locked([(Candidate, list(Candidate.objects.filter(target_id=target.pk).values_list("pk", flat=True)))])
        refusal = target_move_refusal(target=target)
        if refusal:
            raise MoveRefused(f"target {target.pk} stays in {_name(old)}: {refusal}")
        target.save()
        candidates = _carry(targets=[target.pk], benchmark_id=target.benchmark_id)
        _let_go(targets=[target.pk], candidates=candidates)
        benchmark_changed(benchmark_id=old)
        benchmark_changed(benchmark_id=target.benchmark_id)


def context_move(*, context: Context) -> None:
    """Save ``context``, given another benchmark, with its targets and their candidates; refused
    (``MoveRefused``) by ``context_move_refusal``. Both benchmarks' figures are computed again."""
    with transaction.atomic():
        old = Context.objects.select_for_update().values_list("benchmark_id", flat=True).get(pk=context.pk)
        targets = list(Target.objects.filter(context_id=context.pk).values_list("pk", flat=True))
        candidates = list(Candidate.objects.filter(target_id__in=targets).values_list("pk", flat=True))
        _locked([(Target, targets), (Candidate, candidates)])
        refusal = context_move_refusal(context=context)
        if refusal:
            raise MoveRefused(f"context {context.pk} stays in {_name(old)}: {refusal}")
        context.save()
        Target.objects.filter(pk__in=targets).update(benchmark_id=context.benchmark_id)
        candidates = _carry(targets=targets, benchmark_id=context.benchmark_id)
        _let_go(contexts=[context.pk], targets=targets, candidates=candidates)
        benchmark_changed(benchmark_id=old)
        benchmark_changed(benchmark_id=context.benchmark_id)


def candidate_move(*, candidate: Candidate) -> None:
    """Save ``candidate``, given another target (of any benchmark it may change); refused
    (``MoveRefused``) by ``candidate_move_refusal``. The figures of both targets are computed again."""
    with transaction.atomic():
        old_target = Candidate.objects.select_for_update().values_list("target_id", flat=True).get(pk=candidate.pk)
        refusal = candidate_move_refusal(candidate=candidate)
        if refusal:
            raise MoveRefused(f"candidate {candidate.pk} stays with its target: {refusal}")
        old = Target.objects.values_list("benchmark_id", flat=True).get(pk=old_target)
        candidate.save()
        _let_go(candidates=[candidate.pk])
        if old == candidate.benchmark_id:
            benchmark_changed(benchmark_id=old, target_ids=[old_target, candidate.target_id])
            return
        benchmark_changed(benchmark_id=old, target_ids=[old_target])
        benchmark_changed(benchmark_id=candidate.benchmark_id, target_ids=[candidate.target_id])
