"""The tallies kept of a benchmark's labels (docs/design.md §7, "Tallies"): each candidate's valid
labels by value and those of step 2 with their accepts (``CandidateTally``), and each worker's
labels in a benchmark (``WorkerTally``), so
the data browser sorts and filters by a column instead of grouping every label.

A label is valid when it was imported or collected in an assignment spam filtering kept
(``annotation.selectors.valid_labels``, docs/design.md §5), so a candidate's tally moves when a
label is written or removed and when its assignment's filtering flips. Every service that does one
of these calls one function of this module in its transaction, after the change:

- ``tallies_labels_collected``: a submit's or a crowd's confirmed work wrote an assignment's labels
  (its candidates' tallies move by what it added, its worker's by its labels);
- ``tallies_validity_changed``: assignments were filtered or kept again (the refresh's filtering,
  a crowd's confirmation that found its HIT full; every other service that flips
  ``Assignment.filtered`` calls it the same way);
- ``tallies_imported``: a chunk of an import wrote labels (``tallies_imported_new`` for the
  candidates it created, counted as it wrote their labels);
- ``tallies_targets_recount``: labels of these targets were removed (an import's removal);
- ``tallies_labels_edited``: labels were added, changed or deleted by hand (the admin).

Deleting a candidate, worker or benchmark removes its tally with it (``CASCADE``).

Concurrency: a tally row is only ever written under its row lock, taken in the candidates' order.
What a submit adds moves the counts by an increment (``INSERT ... ON CONFLICT DO UPDATE`` adds to
the row as it stands when the lock is granted), in one statement. A recount creates the missing
rows with their counts and locks the others in one statement, then counts those again in the next:
in READ COMMITTED the second count's snapshot is taken after every earlier writer of those rows
committed, and a later writer waits for the recount to commit before adding its labels, so no
label is lost or counted twice.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Sequence
from typing import Any

from django.db import connection

from annotation.models import Candidate, CandidateTally, Label, LabelValue, Target, WorkerTally
from crowdlex.dialect import dialect
from crowdlex.sql import execute, kept_cursor


@functools.cache
def _tables() -> dict[str, str]:
    quote = connection.ops.quote_name
    assignment = Label._meta.get_field("assignment").related_model
    return {
        "label": quote(Label._meta.db_table),
        "candidate": quote(Candidate._meta.db_table),
        "target": quote(Target._meta.db_table),
        "assignment": quote(assignment._meta.db_table),  # type: ignore[union-attr]
        "tally": quote(CandidateTally._meta.db_table),
        "worker_tally": quote(WorkerTally._meta.db_table),
    }


def _counts(label: str, valid: str) -> str:
    """The select list of a tally's counts (``_COUNTS``) over ``label`` rows whose validity ``valid`` states."""
    parts = [
        f"COUNT({label}.id) FILTER (WHERE {valid} AND {label}.value = '{value}') AS {name}"
        for value, name in (
            (LabelValue.ACCEPT, "accepts"),
            (LabelValue.REJECT, "rejects"),
            (LabelValue.ABSTAIN, "abstains"),
        )
    ]
    return ", ".join(
        [
            *parts,
            f"COUNT({label}.id) FILTER (WHERE {valid}) AS labels",
            f"COUNT({label}.id) FILTER (WHERE {valid} AND {label}.step = 2) AS step2_labels",
            f"COUNT({label}.id) FILTER (WHERE {valid} AND {label}.step = 2 AND {label}.value = '{LabelValue.ACCEPT}') "
            "AS step2_accepts",
        ]
    )


# A tally's counts, in the order of its columns after the candidate (and of ``_counts``).
_COUNTS = ("accepts", "rejects", "abstains", "labels", "step2_labels", "step2_accepts")
_COLUMNS = ", ".join(_COUNTS)


def _set(source: str) -> str:
    """``SET`` of every count to the same of ``source`` (``EXCLUDED``, or a query's alias)."""
    return ", ".join(f"{name} = {source}.{name}" for name in _COUNTS)


def _within(column: str, ids: Sequence[int]) -> tuple[str, list[Any]]:
    """``column`` among ``ids``, one placeholder each."""
    return f"{column} IN ({', '.join(['%s'] * len(ids))})", list(ids)


@functools.cache
def _collected_statements() -> tuple[str, str, str]:
    """``tallies_labels_collected``'s statements: the worker's tally, the candidates' tallies, and
    the two in one (the worker's row after the candidates': an unread data-modifying WITH runs
    last, and every writer takes candidate rows before worker rows). Built once per process."""
    t = _tables()
    worker = (
        f"INSERT INTO {t['worker_tally']} (benchmark_id, worker_id, labels) VALUES (%s, %s, %s) "
        f"ON CONFLICT (benchmark_id, worker_id) DO UPDATE SET labels = {t['worker_tally']}.labels + EXCLUDED.labels"
    )
    added = ", ".join(f"{name} = {t['tally']}.{name} + EXCLUDED.{name}" for name in _COUNTS)
    candidates = (
        f"INSERT INTO {t['tally']} (candidate_id, {_COLUMNS}) "
        f"SELECT l.candidate_id, {_counts('l', 'TRUE')} FROM {t['label']} l "
        f"JOIN {t['assignment']} a ON a.id = l.assignment_id "
        "WHERE l.assignment_id = %s AND NOT a.filtered GROUP BY l.candidate_id ORDER BY l.candidate_id "
        f"ON CONFLICT (candidate_id) DO UPDATE SET {added}"
    )
    return worker, candidates, f"WITH worker AS ({worker}) {candidates}"


def tallies_labels_collected(*, assignment_id: int, worker_id: int, benchmark_id: int, labels: int) -> None:
    """An assignment's ``labels`` collected labels were just written: its candidates' tallies take
    those that count (none while the assignment is filtered), its worker's tally in the benchmark
    takes them all. One statement where the database chains writes (two elsewhere). Call once per assignment, in the
    transaction that wrote the labels and holds the assignment's lock."""
    if not labels:
        return
    worker, candidates, both = _collected_statements()
    with kept_cursor() as cursor:
        if dialect().chains_writes:
            execute(cursor, both, [benchmark_id, worker_id, labels, assignment_id])
            return
        execute(cursor, candidates, [assignment_id])
        execute(cursor, worker, [benchmark_id, worker_id, labels])


def _counted(candidates: str) -> str:
    """A query of the valid labels by value of each candidate ``candidates`` selects."""
    t = _tables()
    return (
        f"SELECT k.candidate_id, {_counts('l', '(l.assignment_id IS NULL OR NOT a.filtered)')} "
        f"FROM (SELECT DISTINCT candidate_id FROM ({candidates}) s) k "
        f"LEFT JOIN {t['label']} l ON l.candidate_id = k.candidate_id "
        f"LEFT JOIN {t['assignment']} a ON a.id = l.assignment_id GROUP BY k.candidate_id"
    )


def _recount(candidates: str, params: list[Any]) -> None:
    """Count again the valid labels of the candidates ``candidates`` selects (a query of one column,
    ``candidate_id``).

    Where the database chains writes, first one statement in the candidates' order: a candidate with no tally row gets
    one with its counts (a writer of that row waits for this transaction, so the counts stand), a
    row that exists is locked without being written (``DO UPDATE ... WHERE FALSE`` locks the rows it
    does not update) and named; then those rows are counted again in a second statement, whose
    snapshot follows every earlier writer of them. An import's new candidates cost one pass."""
    t = _tables()
    counted = _counted(candidates)
    insert = (
        f"INSERT INTO {t['tally']} (candidate_id, {_COLUMNS}) "
        f"SELECT candidate_id, {_COLUMNS} FROM counted WHERE TRUE ORDER BY candidate_id "
        f"ON CONFLICT (candidate_id) DO UPDATE SET {_set('EXCLUDED')}"
    )
    with connection.cursor() as cursor:
        if not dialect().chains_writes:
            # The embedded database has one writer at a time: nothing overlaps a count.
            cursor.execute(f"WITH counted AS ({counted}) {insert}", params)
            return
        cursor.execute(
            f"WITH counted AS ({counted}), written AS ({insert} WHERE FALSE RETURNING candidate_id) "
            "SELECT candidate_id FROM counted WHERE candidate_id NOT IN (SELECT candidate_id FROM written)",
            params,
        )
        existing = sorted(pk for (pk,) in cursor.fetchall())
        if not existing:
            return
        within, params = _within("id", existing)
        recounted = _counted(f"SELECT id AS candidate_id FROM {t['candidate']} WHERE {within}")
        cursor.execute(
            f"UPDATE {t['tally']} SET {_set('c')} FROM ({recounted}) c "
            f"WHERE {t['tally']}.candidate_id = c.candidate_id",
            params,
        )


def tallies_validity_changed(*, assignment_ids: Sequence[int]) -> None:
    """The filtering of these assignments may have flipped: the tallies of the candidates their labels
    judge are counted again (two statements, whatever the number of assignments). Call in the
    transaction of the change, after it."""
    if not assignment_ids:
        return
    within, params = _within("assignment_id", sorted(set(assignment_ids)))
    _recount(f"SELECT candidate_id FROM {_tables()['label']} WHERE {within}", params)


def tallies_imported(*, own: Collection[int], others: Collection[int]) -> None:
    """A chunk of an import wrote labels: ``own``, candidates the import created (no other transaction
    sees them before it commits, so their rows are written with their counts in one statement), and
    ``others``, candidates that were there before (counted again, two statements). Imported labels
    name no worker."""
    t = _tables()
    with connection.cursor() as cursor:
        if own:
            within, params = _within("id", sorted(own))
            counted = _counted(f"SELECT id AS candidate_id FROM {t['candidate']} WHERE {within}")
            cursor.execute(
                f"INSERT INTO {t['tally']} (candidate_id, {_COLUMNS}) "
                f"SELECT * FROM ({counted}) c "
                f"WHERE TRUE ON CONFLICT (candidate_id) DO UPDATE SET {_set('EXCLUDED')}",
                params,
            )
    if others:
        within, params = _within("id", sorted(others))
        _recount(f"SELECT id AS candidate_id FROM {t['candidate']} WHERE {within}", params)


def tallies_imported_new(counts: dict[int, list[int]]) -> None:
    """Candidates that a chunk of an import created, each with the labels the chunk wrote for it,
    counted as it wrote them: ``[accepts, rejects, abstains, labels, step2_labels, step2_accepts]``.
    No other transaction sees these candidates before the import commits and none has a tally yet,
    so their rows are written as they are (COPY where the database has it), without counting the
    labels again."""
    if not counts:
        return
    rows = sorted(counts.items())
    if dialect().bulk_copy:
        lines = [",".join(map(str, [pk, *numbers])) + "\n" for pk, numbers in rows]
        dialect().copy_lines(CandidateTally, ("candidate", *_COUNTS), lines)
        return
    CandidateTally.objects.bulk_create(
        CandidateTally(candidate_id=pk, **dict(zip(_COUNTS, numbers, strict=True))) for pk, numbers in rows
    )


def tallies_targets_recount(*, target_ids: Sequence[int]) -> None:
    """Labels of these targets' candidates were removed (or may have been): their tallies are counted
    again (two statements)."""
    if not target_ids:
        return
    within, params = _within("target_id", sorted(set(target_ids)))
    _recount(f"SELECT id AS candidate_id FROM {_tables()['candidate']} WHERE {within}", params)


def tallies_labels_edited(*, candidate_ids: Collection[int], workers: Collection[tuple[int, int]]) -> None:
    """Labels were added, changed or deleted by hand (the admin): the tallies of the candidates they
    judged, before and after, and of their workers in their benchmarks (``(benchmark_id, worker_id)``)
    are counted again. Each worker's row is first written unchanged (created at 0 if missing), which
    takes its lock, then counted in a statement of its own, as ``_recount`` does for candidates: a
    submit adding to the row meanwhile either committed before the count's snapshot or waits for
    this transaction. Call in the transaction of the edit, after it."""
    if candidate_ids:
        within, params = _within("id", sorted(set(candidate_ids)))
        _recount(f"SELECT id AS candidate_id FROM {_tables()['candidate']} WHERE {within}", params)
    t = _tables()
    with connection.cursor() as cursor:
        for benchmark_id, worker_id in sorted(set(workers)):
            cursor.execute(
                f"INSERT INTO {t['worker_tally']} (benchmark_id, worker_id, labels) VALUES (%s, %s, 0) "
                f"ON CONFLICT (benchmark_id, worker_id) DO UPDATE SET labels = {t['worker_tally']}.labels",
                [benchmark_id, worker_id],
            )
            cursor.execute(
                f"UPDATE {t['worker_tally']} SET labels = (SELECT COUNT(*) FROM {t['label']} l "
                "WHERE l.benchmark_id = %s AND l.worker_id = %s) WHERE benchmark_id = %s AND worker_id = %s",
                [benchmark_id, worker_id, benchmark_id, worker_id],
            )


def tallies_benchmark_recount(*, benchmark_id: int) -> None:
    """Count every tally of the benchmark again from its labels (four statements): for labels written
    by other means than the services above (a bulk load of a benchmark), and to repair."""
    t = _tables()
    benchmark_labels = (
        f"FROM {t['label']} l JOIN {t['candidate']} c ON c.id = l.candidate_id "
        f"JOIN {t['target']} tg ON tg.id = c.target_id WHERE tg.benchmark_id = %s"
    )
    _recount(
        f"SELECT c.id AS candidate_id FROM {t['candidate']} c JOIN {t['target']} tg ON tg.id = c.target_id "
        "WHERE tg.benchmark_id = %s",
        [benchmark_id],
    )
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {t['worker_tally']} (benchmark_id, worker_id, labels) "
            f"SELECT DISTINCT %s, l.worker_id, 0 {benchmark_labels} AND l.worker_id IS NOT NULL "
            "ORDER BY l.worker_id ON CONFLICT (benchmark_id, worker_id) "
            f"DO UPDATE SET labels = {t['worker_tally']}.labels",
            [benchmark_id, benchmark_id],
        )
        cursor.execute(
            f"UPDATE {t['worker_tally']} SET labels = (SELECT COUNT(*) {benchmark_labels} "
            f"AND l.worker_id = {t['worker_tally']}.worker_id) WHERE {t['worker_tally']}.benchmark_id = %s",
            [benchmark_id, benchmark_id],
        )
