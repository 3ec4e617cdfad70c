"""A simulated crowd that runs a benchmark's pipeline end to end through the real services.

Researchers use it to rehearse a collection and tune thresholds before paying anyone; the test
suite uses it to check the pipeline as a whole. Simulated workers claim and submit through
``hits.services`` exactly like people on the local queue, and ``benchmark_refresh`` filters and
advances after every submission.

Who is in the crowd:
- honest workers answer from a hidden true acceptability per candidate (the share of people
  who would accept it), with a little noise: they rarely abstain and almost never miss a control;
- spammers click at random;
- bots either accept everything, or answer instantly with a language model's fixed opinion
  (accept what is more likely good than not); both take a second or two per page;
- LLM-assisted workers answer like careful people (they pass the controls and side with the
  majority) but take their answers from a language model: a chatbot in another tab, or an agent
  driving the page.
Each submission carries the telemetry its page would have recorded (review.simulation_telemetry):
honest people differ in pace and device (phones, desktops, keyboards), so the signals meet variety.
"""

from __future__ import annotations

import csv
import hashlib
import io
import random
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import IO, Any, Protocol, cast

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import F, OuterRef, Subquery
from django.utils import timezone

from annotation.changes import benchmark_changed
from annotation.importers import ImportFailed
from annotation.importers.reading import READ_ERRORS, Source, open_binary, source_name
from annotation.models import (
    Benchmark,
    Candidate,
    CandidateStage,
    Label,
    Target,
    TargetStage,
    Worker,
    WorkerKind,
    normalize_candidate,
)
from annotation.selectors import valid_labels
from crowdlex.progress import Progress
from crowds.interface import default_backend_name, queue_backend_names
from hits.models import HIT, Assignment, AssignmentStatus, Batch, BatchStatus, HITItem
from hits.telemetry import Telemetry
from review.models import WorkerFlag
from review.services import benchmark_refresh
from review.signals import INTERACTION_REASONS
from review.simulation_telemetry import (
    Habits,
    honest_habits,
    human_telemetry,
    llm_habits,
    llm_telemetry,
    script_telemetry,
)
from schemes import AnnotationScheme, get_scheme
from schemes.base import main_step

HONEST = "honest"
SPAMMER = "spammer"
BOT_ACCEPT = "bot-accept"
BOT_INSTANT = "bot-instant"
LLM = "llm"
# A worker of the replay crowd (review.replay): answers from a released benchmark's labels.
REPLAY = "replay"

# Honest behaviour (seconds are per row of the page; about 12 rows per HIT).
HONEST_SECONDS_PER_ROW = 8.0
HONEST_CONTROL_ERROR = 0.005
HONEST_ABSTAIN = 0.03
SPAMMER_SECONDS_PER_ROW = 3.0
BOT_SECONDS_PER_ROW = 0.15
LLM_ABSTAIN = 0.01
# A worker's turn is a session of 1 to SESSION_HITS HITs in a row.
SESSION_HITS = 8


class SimulationError(ValueError):
    """The simulation cannot start; the message says why."""


@dataclass(frozen=True)
class SimulatedWorker:
    worker: Worker
    role: str
    rng: random.Random
    habits: Habits
    # How they work the page (hits.telemetry), apart from ``rng`` so their answers do not depend on it.
    behaviour: random.Random


@dataclass
class SimulationReport:
    benchmark: str
    seed: int
    honest: int
    spammers: int
    bots: int
    llm: int = 0
    spammers_caught: int = 0
    honest_flagged: int = 0
    honest_ever_filtered: int = 0
    bots_flagged: int = 0
    llm_flagged: int = 0
    # Honest and LLM-assisted workers flagged by a telemetry signal (pasted, away, no_input, uniform_timing).
    honest_flagged_by_telemetry: int = 0
    llm_flagged_by_telemetry: int = 0
    labels: int = 0
    valid_labels: int = 0
    assignments: int = 0
    filtered_assignments: int = 0
    recollected_hits: int = 0
    targets: int = 0
    targets_done: int = 0
    candidates: int = 0
    candidates_scored: int = 0
    candidates_dropped: int = 0
    followup_batches: int = 0
    reward: str = "0.00"
    cost: str = "0.00"
    cost_filtered: str = "0.00"
    rounds: int = 0
    seconds: float = 0.0
    finished: bool = False
    stuck: str = ""
    flagged_reasons: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class ReplaySource(Protocol):
    """What a simulation asks of a crowd that answers from a released benchmark's labels
    (``review.replay.ReplayCrowd``)."""

    workers: int
    settle_exhausted: bool

    def new_report(self, *, benchmark: Benchmark, seed: int) -> SimulationReport: ...

    def nothing_to_draw(self, items: list[HITItem]) -> bool: ...

    def answer(self, member: SimulatedWorker, item: HITItem, scheme: AnnotationScheme) -> str: ...

    def settle(self) -> list[int]: ...

    def fill(self, report: SimulationReport, *, benchmark: Benchmark) -> None: ...


def true_acceptability(*, seed: int, key: str, sources: Sequence[str]) -> float:
    """The hidden share of people who would accept a candidate, fixed by the seed and the candidate's ``key``.

    The key is made of the candidate's content (context, target offset, normalised text), never
    of database ids, so the same seed on the same data gives the same run.

    Roughly SWORDS's shape: many thesaurus entries nobody accepts, a middle band people split on,
    and good substitutes most accept; candidates a CoInCo annotator proposed lean good.
    """
    digest = hashlib.sha256(f"{seed}:{key}".encode()).digest()
    rng = random.Random(int.from_bytes(digest[:8], "big"))
    good_bias = 0.25 if "coinco" in sources else 0.0
    draw = rng.random()
    if draw < 0.40 - good_bias:
        return rng.uniform(0.0, 0.05)
    if draw < 0.70 - good_bias / 2:
        return rng.uniform(0.1, 0.5)
    return rng.uniform(0.5, 0.95)


#: The truth file's columns (docs/pipeline.md, "The simulated crowd"), and its answers in words.
TRUTH_COLUMNS = ("target", "candidate", "accept")
TRUTH_WORDS = {"accept": 1.0, "reject": 0.0}

#: Truth per (target id, candidate normalised as candidates are): the share of people who accept.
Truth = Mapping[tuple[int, str], float]


def truth_load(*, benchmark: Benchmark, source: Source) -> dict[tuple[int, str], float]:
    """A truth file for the simulated crowd: CSV with the columns ``target`` (the target's id, or
    its external id), ``candidate`` (its text) and ``accept`` (the share of people who would
    accept it, 0 to 1, or the word accept or reject). Honest and LLM-assisted workers then answer
    those candidates from it instead of the hidden draw (a system's substitutes judged with a
    known answer). A bad row is refused with the file, line and field; nothing is read half."""
    name = source_name(source)
    targets = Target.objects.filter(benchmark=benchmark)
    by_id = {str(pk): pk for pk in targets.values_list("pk", flat=True)}
    by_external = {external: pk for pk, external in targets.exclude(external_id="").values_list("pk", "external_id")}
    truth: dict[tuple[int, str], float] = {}
    try:
        with open_binary(source, file=name) as stream:
            text = io.TextIOWrapper(cast(IO[bytes], stream), encoding="utf-8-sig", newline="")
            reader = csv.DictReader(text)
            missing = [column for column in TRUTH_COLUMNS if column not in (reader.fieldnames or [])]
            if missing:
                raise SimulationError(f"{name}, line 1: the truth file has no column {', '.join(missing)}")
            for row in reader:
                line = reader.line_num
                key = (row["target"] or "").strip()
                target = by_external.get(key, by_id.get(key))
                if target is None:
                    raise SimulationError(f"{name}, line {line}, field target: no target {key!r} in {benchmark.name}")
                candidate = normalize_candidate(row["candidate"] or "")
                if not candidate:
                    raise SimulationError(f"{name}, line {line}, field candidate: empty")
                truth[(target, candidate)] = _truth_value(row["accept"], where=f"{name}, line {line}, field accept")
    except (UnicodeDecodeError, csv.Error, ImportFailed, *READ_ERRORS) as exc:
        raise SimulationError(f"{name} is not a truth file (CSV: {', '.join(TRUTH_COLUMNS)}): {exc}") from exc
    return truth


def _truth_value(raw: str | None, *, where: str) -> float:
    word = (raw or "").strip().casefold()
    if word in TRUTH_WORDS:
        return TRUTH_WORDS[word]
    try:
        value = float(word)
    except ValueError:
        raise SimulationError(f"{where}: {raw!r} is neither accept, reject nor a share from 0 to 1") from None
    if not 0 <= value <= 1:
        raise SimulationError(f"{where}: {raw!r} is not a share from 0 to 1")
    return value


def _control_answers(scheme: AnnotationScheme, kind: str) -> tuple[str, str]:
    """A right and a wrong answer to a control of ``kind``, as the scheme checks them (its choices
    in their order: the first it accepts, the first it refuses)."""
    values = [choice.value for choice in scheme.page.choices]
    right = [value for value in values if scheme.control_check(kind=kind, value=value)[0]]
    wrong = [value for value in values if value not in right]
    if not right or not wrong:
        raise SimulationError(f"{scheme.title}: a control of kind {kind!r} has no right and wrong choice")
    return right[0], wrong[0]


def _answer(member: SimulatedWorker, item: HITItem, truth: dict[int, float], scheme: AnnotationScheme) -> str:
    rng = member.rng
    if member.role == SPAMMER:
        return rng.choice(("accept", "reject", "abstain"))
    if member.role == BOT_ACCEPT:
        return "accept"
    if item.control:
        right, wrong = _control_answers(scheme, item.kind)
        if member.role == HONEST and rng.random() < HONEST_CONTROL_ERROR:
            return wrong
        return right
    p = truth[item.candidate_id or 0]
    if member.role == BOT_INSTANT:
        return "accept" if p > 0.5 else "reject"
    if member.role == LLM:
        # A model's judgment leans the way most people lean, a little more firmly than one person's.
        if rng.random() < LLM_ABSTAIN:
            return "abstain"
        firm = p * p / (p * p + (1 - p) * (1 - p)) if 0 < p < 1 else p
        return "accept" if rng.random() < firm else "reject"
    if rng.random() < HONEST_ABSTAIN:
        return "abstain"
    return "accept" if rng.random() < p else "reject"


def _telemetry(member: SimulatedWorker, rows: int) -> Telemetry:
    """What the page records of this member answering ``rows`` rows.

    The page's pace is drawn from the member's answering generator, once per page as the simulation
    always drew the time on page, so a seed gives the same answers and sessions as before telemetry;
    everything else comes from the member's own generator of behaviour.
    """
    pace = member.rng.lognormvariate(0.0, 0.3)
    rng = member.behaviour
    if member.role in (BOT_ACCEPT, BOT_INSTANT):
        return script_telemetry(rng, rows, BOT_SECONDS_PER_ROW * pace)
    if member.role == LLM:
        return llm_telemetry(rng, member.habits, rows, HONEST_SECONDS_PER_ROW * pace)
    per_row = SPAMMER_SECONDS_PER_ROW if member.role == SPAMMER else HONEST_SECONDS_PER_ROW
    return human_telemetry(rng, member.habits, rows, per_row * pace)


def _seconds(telemetry: Telemetry) -> float:
    """Time on page as the page counts it: visible time, from the first view to the last answer."""
    return round(sum(telemetry.item_ms) / 1000, 2)


def _crowd(
    *, benchmark: Benchmark, honest: int, spammers: int, bots: int, llm: int, seed: int, replay: int = 0
) -> list[SimulatedWorker]:
    roles = [HONEST] * honest + [SPAMMER] * spammers + [BOT_ACCEPT if i % 2 == 0 else BOT_INSTANT for i in range(bots)]
    roles += [LLM] * llm
    roles += [REPLAY] * replay
    counters: Counter[str] = Counter()
    crowd: list[SimulatedWorker] = []
    for role in roles:
        counters[role] += 1
        name = f"sim:{benchmark.name}:{seed}:{role}-{counters[role]:03d}"
        worker, _ = Worker.objects.get_or_create(kind=WorkerKind.SIMULATED, external_id=name)
        # Seeded by role and rank, not by name, so a run does not depend on the benchmark's name.
        rng = random.Random(f"{seed}:{role}:{counters[role]}")
        behaviour = random.Random(f"{seed}:{role}:{counters[role]}:behaviour")
        habits = llm_habits(counters[role], behaviour) if role == LLM else honest_habits(behaviour)
        crowd.append(SimulatedWorker(worker=worker, role=role, rng=rng, habits=habits, behaviour=behaviour))
    return crowd


def _scope(*, benchmark: Benchmark, targets: int | None, seed: int, wave: int | None = None) -> list[list[int]]:
    """The targets the simulation drives, in waves: those with HITs of the first step the scheme runs
    itself (``main_step``), as one wave; or else the first N waiting for that step, in waves of
    ``wave`` targets (one wave without it), the first of which gets its batch of that step now
    (``_launch``) and each later one once the wave before it is done."""
    step = main_step(get_scheme(benchmark).steps)
    with_hits = sorted(
        set(HIT.objects.filter(batch__benchmark=benchmark, batch__step=step).values_list("target_id", flat=True))
    )
    if with_hits:
        return [with_hits[:targets] if targets is not None else with_hits]
    chosen = list(
        Target.objects.filter(benchmark=benchmark, stage=TargetStage.REDUCE).order_by("pk").values_list("pk", flat=True)
    )
    if targets is not None:
        chosen = chosen[:targets]
    if not chosen:
        raise SimulationError(f"benchmark {benchmark.name!r} has no target waiting for step {step}")
    size = wave or len(chosen)
    waves = [chosen[start : start + size] for start in range(0, len(chosen), size)]
    _launch(benchmark=benchmark, target_ids=waves[0], seed=seed)
    return waves


def _launch(*, benchmark: Benchmark, target_ids: list[int], seed: int) -> None:
    """A batch of the first step the scheme runs itself for ``target_ids``, as a researcher makes it."""
    from hits.services import hits_generate

    step = main_step(get_scheme(benchmark).steps)
    hits_generate(benchmark=benchmark, step=step, seed=seed, targets=target_ids, backend=default_backend_name())


def _refresh_inline() -> bool:
    """Whether the simulation must call the refresh itself after each submit.

    The submit queues the refresh on commit; it runs right away only with eager tasks and no
    enclosing transaction (inside one, e.g. a test, on-commit callbacks wait for the outer commit).
    """
    from crowdlex.celery import app

    return not app.conf.task_always_eager or connection.in_atomic_block


def _next_deadline(*, target_ids: list[int]) -> datetime | None:
    """The earliest deadline among live claims on the simulated targets' HITs."""
    return (
        Assignment.objects.filter(hit__target_id__in=target_ids, status=AssignmentStatus.CLAIMED)
        .order_by("deadline")
        .values_list("deadline", flat=True)
        .first()
    )


def _take_qualification(*, benchmark: Benchmark, crowd: list[SimulatedWorker], now: datetime) -> int | None:
    """Each simulated worker takes the benchmark's active qualification test, as a person would before
    the queue offers them its HITs (docs/design.md §9): honest, instant bots and LLM-assisted workers
    answer the gold items as expected (honest people with their usual slips), spammers at random, the
    accept-everything bots accept. Returns how many passed, or None when there is no active test.
    """
    from hits.qualification import QualificationRefused, qualification_attempt_start, qualification_attempt_submit
    from hits.qualification.models import QualificationItem, QualificationTest

    test = QualificationTest.objects.filter(benchmark=benchmark, active=True).first()
    if test is None:
        return None
    expected = dict(QualificationItem.objects.filter(test=test).values_list("pk", "expected"))
    passed = 0
    for member in crowd:
        rng = member.rng
        try:
            attempt = qualification_attempt_start(test=test, worker=member.worker, now=now)
            if attempt.submitted_at is None:
                answers: dict[str, str] = {}
                for item_id in attempt.items:
                    right = expected[item_id]
                    if member.role == SPAMMER:
                        answers[str(item_id)] = rng.choice(("accept", "reject", "abstain"))
                    elif member.role == BOT_ACCEPT:
                        answers[str(item_id)] = "accept"
                    elif member.role == HONEST and rng.random() < HONEST_CONTROL_ERROR:
                        answers[str(item_id)] = "reject" if right == "accept" else "accept"
                    else:
                        answers[str(item_id)] = right
                attempt = qualification_attempt_submit(attempt=attempt, answers=answers, now=now)
        except (QualificationRefused, ValidationError) as error:
            raise SimulationError(
                f"the simulated crowd cannot take the qualification test of {benchmark.name!r} ({error}); "
                "switch the test off on its page to rehearse without it"
            ) from None
        passed += bool(attempt.passed)
    return passed


def _settle_times(
    *, benchmark: Benchmark, crowd: list[SimulatedWorker], started_at: datetime, ended_at: datetime
) -> None:
    """Mark the benchmark as filled by a simulated crowd and put the crowd's times in the past.

    The simulated clock runs one worker after another, so it ends hours after the real one; its
    claims, submissions, labels and qualification attempts move back by that lead, keeping their
    durations and order, and so end now. ``benchmark.extra["simulated"]`` is what exports and the
    dataset card read (``annotation.selectors.benchmark_simulated``).
    """
    from hits.qualification.models import QualificationAttempt

    now = timezone.now()
    lead = max(ended_at - now, timedelta(0))
    worker_ids = [member.worker.pk for member in crowd]
    with transaction.atomic():
        locked = Benchmark.objects.select_for_update(no_key=True).get(pk=benchmark.pk)
        if lead:
            work = Assignment.objects.filter(hit__batch__benchmark=benchmark, worker_id__in=worker_ids)
            work.filter(claimed_at__gte=started_at).update(
                claimed_at=F("claimed_at") - lead, deadline=F("deadline") - lead
            )
            work.filter(submitted_at__gte=started_at).update(submitted_at=F("submitted_at") - lead)
            QualificationAttempt.objects.filter(test__benchmark=benchmark, worker_id__in=worker_ids).filter(
                started_at__gte=started_at
            ).update(started_at=F("started_at") - lead)
            QualificationAttempt.objects.filter(test__benchmark=benchmark, worker_id__in=worker_ids).filter(
                submitted_at__gte=started_at
            ).update(submitted_at=F("submitted_at") - lead)
        # A label is written when its assignment is submitted.
        submitted = Assignment.objects.filter(pk=OuterRef("assignment_id")).values("submitted_at")[:1]
        Label.objects.filter(
            assignment__hit__batch__benchmark=benchmark,
            worker_id__in=worker_ids,
            assignment__submitted_at__isnull=False,
        ).update(created_at=Subquery(submitted))
        simulated = dict(locked.extra.get("simulated") or {})
        simulated["runs"] = int(simulated.get("runs", 0)) + 1
        simulated["workers"] = sorted(set(simulated.get("workers", [])) | set(worker_ids))
        simulated["last_run"] = now.isoformat()
        locked.extra = {**locked.extra, "simulated": simulated}
        locked.save(update_fields=["extra"])
        # The qualification page shows the attempts' times (docs/design.md §7, "Kept pages").
        benchmark_changed(benchmark_id=benchmark.pk, target_ids=())
    benchmark.extra = locked.extra


def _stuck_reason(
    *, benchmark: Benchmark, target_ids: list[int], crowd: list[SimulatedWorker], qualified: int | None = None
) -> str:
    open_hits = list(
        HIT.objects.filter(
            target_id__in=target_ids, batch__status=BatchStatus.OPEN, batch__backend__in=queue_backend_names()
        )
        .filter(assignments_active__lt=F("assignments_required"))
        .values_list("pk", flat=True)
    )
    unfinished = Target.objects.filter(pk__in=target_ids).exclude(stage=TargetStage.DONE).count()
    if not open_hits:
        return (
            f"{unfinished} target(s) are not done but no local HIT has an open slot "
            "(closed batches, or HITs on another backend)"
        )
    usable = [m for m in crowd if not Worker.objects.filter(pk=m.worker.pk, blocked=True).exists()]
    blocked = len(crowd) - len(usable)
    if qualified is not None and qualified < len(crowd):
        return (
            f"{unfinished} target(s) are not done and {len(open_hits)} HIT(s) still have open slots, but only "
            f"{qualified} of the {len(crowd)} simulated workers passed the qualification test of {benchmark.name}, "
            "and they may take no more of them. Add honest workers (--honest) to finish."
        )
    return (
        f"{unfinished} target(s) are not done and {len(open_hits)} HIT(s) still have open slots, but none of the "
        f"{len(usable)} unblocked simulated workers may take them (each has already worked on the HIT or judged "
        f"one of its candidates: labels of a candidate come from distinct workers); {blocked} worker(s) are "
        "blocked. Add honest workers (--honest) to finish."
    )


def _claim_in_scope(
    worker: Worker, *, benchmark: Benchmark, target_ids: list[int] | None, now: datetime
) -> Assignment | None:
    """The worker's next HIT among the simulated targets (None: every target of the benchmark); HITs
    of other targets are handed back at once.

    Bounded: a worker is never offered a HIT they returned, so each hand-back removes one HIT.
    """
    from hits.services import assignment_claim_next, assignment_return

    in_scope = set(target_ids) if target_ids is not None else set()
    while True:
        assignment = assignment_claim_next(worker=worker, benchmark=benchmark, now=now)
        if assignment is None or target_ids is None or assignment.hit.target_id in in_scope:
            return assignment
        assignment_return(assignment=assignment)


def crowd_simulate(
    *,
    benchmark: Benchmark,
    honest: int,
    spammers: int,
    bots: int = 0,
    llm: int = 0,
    seed: int = 0,
    targets: int | None = None,
    max_rounds: int = 100_000,
    progress: Progress | None = None,
    replay: ReplaySource | None = None,
    wave: int | None = None,
    truth: Truth | None = None,
) -> SimulationReport:
    """Run a simulated crowd through the real claim / submit services until the pipeline finishes or stalls.

    With ``replay`` (``review.replay.crowd_replay``) the crowd is its workers alone, answering from
    a released benchmark's labels. ``truth`` (``truth_load``) gives the share of people who accept
    some candidates, which the crowd then answers from instead of its hidden draw.

    Workers take turns in a shuffled order; each turn is a session of a few HITs, each claimed
    and submitted at once (a simulated clock supplies the time on page). The run ends when every target in
    scope is done, or when a whole round claims nothing and a refresh changes nothing: the
    report's ``stuck`` then says why. ``progress(targets done, targets)`` after each round.

    With ``wave``, a benchmark without HITs of its first step is collected ``wave`` targets at a
    time, each wave's batch made once the wave before it is done, as a lab publishes a large
    collection in parts: a refresh then looks at the targets in progress, not at all of them.
    """
    if min(honest, spammers, bots, llm) < 0:
        raise SimulationError("worker counts cannot be negative")
    if honest + spammers + bots + llm == 0 and replay is None:
        raise SimulationError("the crowd is empty: give --honest, --spammers, --bots or --llm")
    if targets is not None and targets < 1:
        raise SimulationError("--targets must be at least 1")
    if wave is not None and wave < 1:
        raise SimulationError("a wave must hold at least 1 target")
    started = time.monotonic()
    waves = _scope(benchmark=benchmark, targets=targets, seed=seed, wave=wave)
    every_target = [pk for ids in waves for pk in ids]
    # The targets launched so far: the first wave, then each next one once those are done.
    target_ids = list(waves.pop(0))
    # Whether the scope is the benchmark's every target: no HIT the queue offers is out of it.
    whole = len(every_target) == Target.objects.filter(benchmark=benchmark).count()
    crowd = _crowd(
        benchmark=benchmark,
        honest=honest,
        spammers=spammers,
        bots=bots,
        llm=llm,
        seed=seed,
        replay=replay.workers if replay is not None else 0,
    )
    order_rng = random.Random(seed)
    truth_cache: dict[int, float] = {}
    clock: datetime = timezone.now()
    refresh_inline = _refresh_inline()
    # The replay measures whole collections: a sitting's submits share one refresh (see below).
    coalesce = replay is not None
    report = (
        SimulationReport(benchmark=benchmark.name, seed=seed, honest=honest, spammers=spammers, bots=bots, llm=llm)
        if replay is None
        else replay.new_report(benchmark=benchmark, seed=seed)
    )
    scheme = get_scheme(benchmark)

    from hits.services import assignment_return, assignment_submit

    def truth_for(items: list[HITItem]) -> dict[int, float]:
        missing = [item.candidate_id for item in items if item.candidate_id and item.candidate_id not in truth_cache]
        if missing:
            rows = Candidate.objects.filter(pk__in=missing).values_list(
                "pk", "target_id", "sources", "normalized", "target__offset", "target__context__digest"
            )
            for pk, target_id, sources, normalized, offset, digest in rows:
                known = truth.get((target_id, normalized)) if truth is not None else None
                if known is not None:
                    truth_cache[pk] = known
                    continue
                key = f"{digest}:{offset}:{normalized}"
                truth_cache[pk] = true_acceptability(seed=seed, key=key, sources=sources or [])
        return truth_cache

    def all_done() -> bool:
        return not Target.objects.filter(pk__in=target_ids).exclude(stage=TargetStage.DONE).exists()

    def session(member: SimulatedWorker, scope: list[int] | None) -> int:
        """One sitting of ``member``: HITs claimed and submitted in a row; how many were claimed."""
        nonlocal clock
        taken = 0
        # People work in sessions of several HITs in a row, as they do on MTurk.
        for _ in range(member.rng.randint(1, SESSION_HITS)):
            assignment = _claim_in_scope(member.worker, benchmark=benchmark, target_ids=scope, now=clock)
            if assignment is None:
                break
            taken += 1
            items = list(HITItem.objects.filter(hit_id=assignment.hit_id).order_by("position"))
            if replay is not None:
                if replay.settle_exhausted and replay.nothing_to_draw(items):
                    # Its candidates have left the rounds: nobody needs the HIT any more.
                    assignment_return(assignment=assignment)
                    continue
                answers = {item.pk: replay.answer(member, item, scheme) for item in items}
                # Candidates whose released labels ran out leave the rounds before the refresh.
                replay.settle()
            else:
                shares = truth_for(items)
                answers = {item.pk: _answer(member, item, shares, scheme) for item in items}
            telemetry = _telemetry(member, len(items))
            seconds = _seconds(telemetry)
            # The wall clock also runs while the page is hidden.
            clock += timedelta(seconds=seconds + telemetry.away_ms / 1000)
            assignment_submit(
                assignment=assignment, answers=answers, seconds_on_page=seconds, now=clock, telemetry=telemetry
            )
            if refresh_inline and not coalesce:
                benchmark_refresh(benchmark=benchmark)
        return taken

    # Claims held by people who left (the demo's tour opens the next HIT on submit) keep their slots
    # until their deadline: release those already overdue, with or without a beat process.
    from hits.services import assignments_expire_overdue

    assignments_expire_overdue(now=clock)
    qualified = _take_qualification(benchmark=benchmark, crowd=crowd, now=clock)
    started_at = clock
    rounds = 0
    while rounds < max_rounds:
        if all_done():
            # Settle with a full refresh (bot signals included): a block it decides may re-open work.
            benchmark_refresh(benchmark=benchmark, full=True)
            if all_done():
                if not waves:
                    break
                launched = waves.pop(0)
                _launch(benchmark=benchmark, target_ids=launched, seed=seed)
                target_ids += launched
        rounds += 1
        claimed = 0
        members = list(crowd)
        order_rng.shuffle(members)
        for member in members:
            scope = None if whole else target_ids
            if coalesce:
                # The replay's sitting is one burst of submits: their refresh requests coalesce into
                # one refresh of the touched work when it commits (``annotation.refresh_requests``),
                # as a burst's do when the refresh task waits in the queue behind them.
                with transaction.atomic():
                    claimed += session(member, scope)
                if refresh_inline:
                    benchmark_refresh(benchmark=benchmark)
            else:
                claimed += session(member, scope)
        if progress is not None:
            done = Target.objects.filter(pk__in=target_ids, stage=TargetStage.DONE).count()
            progress(done, len(every_target))
        # A round that claims nothing: make sure filtering and advancement are current, then decide.
        if claimed == 0 and not benchmark_refresh(benchmark=benchmark, full=True).changed and not all_done():
            # Slots held by live claims come back at their deadlines: the crowd waits for them.
            deadline = _next_deadline(target_ids=target_ids)
            if deadline is not None:
                clock = max(clock, deadline)
                if assignments_expire_overdue(now=clock):
                    continue
            report.stuck = _stuck_reason(benchmark=benchmark, target_ids=target_ids, crowd=crowd, qualified=qualified)
            break
    report.rounds = rounds
    _settle_times(benchmark=benchmark, crowd=crowd, started_at=started_at, ended_at=clock)
    _fill_report(report, benchmark=benchmark, target_ids=every_target, crowd=crowd)
    if replay is not None:
        replay.fill(report, benchmark=benchmark)
    report.seconds = round(time.monotonic() - started, 2)
    return report


def _fill_report(
    report: SimulationReport,
    *,
    benchmark: Benchmark,
    target_ids: list[int],
    crowd: list[SimulatedWorker],
) -> None:
    worker_ids = [member.worker.pk for member in crowd]
    role_of = {member.worker.pk: member.role for member in crowd}
    active_flags = WorkerFlag.objects.filter(benchmark=benchmark, worker_id__in=worker_ids, cleared_at__isnull=True)
    flagged: dict[int, set[str]] = {}
    for worker_id, reason in active_flags.values_list("worker_id", "reason"):
        flagged.setdefault(worker_id, set()).add(reason)
    blocked = set(Worker.objects.filter(pk__in=worker_ids, blocked=True).values_list("pk", flat=True))
    caught = {pk for pk in worker_ids if "control_accuracy" in flagged.get(pk, set()) or pk in blocked}
    report.spammers_caught = sum(1 for pk in caught if role_of[pk] == SPAMMER)
    report.honest_flagged = sum(1 for pk in flagged if role_of[pk] == HONEST)
    report.bots_flagged = sum(1 for pk in set(flagged) | blocked if role_of[pk] in (BOT_ACCEPT, BOT_INSTANT))
    report.llm_flagged = sum(1 for pk in set(flagged) | blocked if role_of[pk] == LLM)
    by_telemetry = {pk for pk, reasons in flagged.items() if reasons & set(INTERACTION_REASONS)}
    report.honest_flagged_by_telemetry = sum(1 for pk in by_telemetry if role_of[pk] == HONEST)
    report.llm_flagged_by_telemetry = sum(1 for pk in by_telemetry if role_of[pk] == LLM)
    report.flagged_reasons = dict(sorted(Counter(r for reasons in flagged.values() for r in reasons).items()))

    work = Assignment.objects.filter(hit__target_id__in=target_ids, worker_id__in=worker_ids)
    submitted = work.filter(
        status__in=[AssignmentStatus.SUBMITTED, AssignmentStatus.APPROVED, AssignmentStatus.REJECTED]
    )
    report.assignments = submitted.count()
    report.filtered_assignments = submitted.filter(filtered=True).count()
    report.honest_ever_filtered = (
        submitted.filter(filtered=True, worker_id__in=[pk for pk in worker_ids if role_of[pk] == HONEST])
        .values("worker_id")
        .distinct()
        .count()
    )
    # A HIT was re-collected when it holds more submissions than it needed: filtered slots went to others.
    report.recollected_hits = sum(
        1
        for hit in HIT.objects.filter(target_id__in=target_ids).prefetch_related("assignments")
        if sum(1 for a in hit.assignments.all() if a.submitted_at is not None) > hit.assignments_required
    )
    labels = Label.objects.filter(candidate__target_id__in=target_ids, assignment__isnull=False)
    report.labels = labels.count()
    report.valid_labels = valid_labels().filter(candidate__target_id__in=target_ids).count()
    report.targets = len(target_ids)
    report.targets_done = Target.objects.filter(pk__in=target_ids, stage=TargetStage.DONE).count()
    candidates = Candidate.objects.filter(target_id__in=target_ids)
    report.candidates = candidates.count()
    report.candidates_scored = candidates.filter(stage=CandidateStage.FINAL).count()
    report.candidates_dropped = candidates.filter(stage=CandidateStage.DROPPED).count()
    followup = get_scheme(benchmark).followup_step
    report.followup_batches = (
        Batch.objects.filter(benchmark=benchmark, step=followup, hits__target_id__in=target_ids).distinct().count()
        if followup is not None
        else 0
    )
    paid = Decimal(0)
    wasted = Decimal(0)
    for reward, filtered in submitted.exclude(status=AssignmentStatus.REJECTED).values_list(
        "hit__batch__reward", "filtered"
    ):
        paid += reward
        if filtered:
            wasted += reward
    report.reward = str(benchmark.reward)
    report.cost = str(paid.quantize(Decimal("0.01")))
    report.cost_filtered = str(wasted.quantize(Decimal("0.01")))
    report.finished = report.targets_done == report.targets
