"""The replay crowd (docs/design.md §13): a benchmark's HITs answered from a released benchmark's labels.

A lab rehearses a design on real label distributions: the benchmark is imported without its labels
(or with its candidates only), then collected by ``crowd_replay`` through the real claim and submit
services, as ``review.simulation.crowd_simulate`` runs its simulated crowd. The scheme reads the
release (``schemes.base.ReplaySource``; a scheme without one cannot be replayed).

- Candidates are matched between the benchmark and the file by (target id in the file, normalised
  candidate text), the keys the scheme's import gives them (``Target.external_id``,
  ``Candidate.normalized``). Every candidate of the benchmark that is not excluded must be in the file.
- Each candidate's released labels are drawn without replacement, in an order seeded by the seed
  and the candidate's keys (never database ids), one per HIT row that judges it.
- Controls are answered as a careful person answers them: right but for a rare slip.
- Where a candidate's released labels run out, its decision stands on what was drawn: under a
  stopping policy that lets candidates stop early it leaves the rounds at once (dropped without an
  accept, scored with one), so no later round asks for it. While the replay collects, the rounds
  the refreshes plan ask no candidate for more labels than its release still holds
  (``schemes.base.REPLAY_LABELS_LEFT``; a real crowd's rounds are the policy's own): a round that
  would ask a candidate for three labels when two are left asks for two, after which it leaves
  the rounds. A HIT that still asks more (a refresh running outside the replay's process) is
  handled as before: the replay worker hands back a HIT none of whose candidates has a label left
  to draw (``hits_returned``: its target is done without it), and answers such a candidate's row
  in a HIT that others still need by drawing again from its released labels, counted apart
  (``labels_beyond_release``). Under a rule whose candidates never leave early (the published
  one), a release collected by that rule never runs out, and any other is answered beyond its
  release.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from annotation.importers.errors import ImportFailed
from annotation.importers.reading import source_name
from annotation.models import Benchmark, Candidate, CandidateStage
from crowdlex.progress import Progress
from hits.models import HITItem
from review.simulation import (
    HONEST_CONTROL_ERROR,
    SimulatedWorker,
    SimulationError,
    SimulationReport,
    _control_answers,
    crowd_simulate,
)
from schemes import AnnotationScheme, get_scheme
from schemes.base import REPLAY_LABELS_LEFT, scheme_replay

# Labels of one candidate come from distinct workers: the crowd must outnumber the most a candidate
# can be asked for, re-collection included.
DEFAULT_REPLAY_WORKERS = 30
# Targets collected at a time when the replay makes the benchmark's first batch (docs/pipeline.md,
# "The replay crowd"): a refresh then looks at the targets in progress, whatever the benchmark's size.
DEFAULT_REPLAY_WAVE = 25
# Unmatched candidates named in the error before "and N more".
SHOWN_UNMATCHED = 5


@dataclass
class ReplayReport(SimulationReport):
    """A simulation report with what the replay drew: the file, labels drawn from the release, labels
    drawn again where a HIT asked more than the release held, and candidates whose labels ran out."""

    replay: str = ""
    stopping_policy: str = ""
    released_labels: int = 0
    labels_drawn: int = 0
    labels_beyond_release: int = 0
    candidates_exhausted: int = 0
    hits_returned: int = 0


@dataclass
class ReplayCrowd:
    """What the replay draws from: per candidate id, its released labels and those still to draw."""

    name: str
    seed: int
    released: dict[int, tuple[str, ...]]
    # Labels still to draw, the next at the end.
    queues: dict[int, list[str]]
    settle_exhausted: bool
    workers: int = DEFAULT_REPLAY_WORKERS
    drawn: int = 0
    beyond: int = 0
    returned: int = 0
    exhausted: set[int] = field(default_factory=set)
    _pending: set[int] = field(default_factory=set)

    def nothing_to_draw(self, items: list[HITItem]) -> bool:
        """Whether no candidate row of a HIT has a released label left: the replay hands it back."""
        rows = [item.candidate_id for item in items if not item.control and item.candidate_id is not None]
        if rows and not any(self.queues.get(candidate_id) for candidate_id in rows):
            self.returned += 1
            return True
        return False

    def answer(self, member: SimulatedWorker, item: HITItem, scheme: AnnotationScheme) -> str:
        """A row's answer: a control as a careful person answers it, a candidate by its next released label."""
        if item.control:
            right, wrong = _control_answers(scheme, item.kind)
            return wrong if member.rng.random() < HONEST_CONTROL_ERROR else right
        candidate_id = item.candidate_id or 0
        queue = self.queues.get(candidate_id)
        if queue:
            self.drawn += 1
            value = queue.pop()
            if not queue:
                self._pending.add(candidate_id)
            return value
        released = self.released.get(candidate_id, ())
        if not released:
            raise SimulationError(f"{self.name}: candidate {candidate_id} has no released label to replay")
        self.beyond += 1
        return member.rng.choice(released)

    def new_report(self, *, benchmark: Benchmark, seed: int) -> ReplayReport:
        return ReplayReport(benchmark=benchmark.name, seed=seed, honest=0, spammers=0, bots=0, replay=self.name)

    def fill(self, report: SimulationReport, *, benchmark: Benchmark) -> None:
        """Add what the replay drew to ``report`` (made by ``new_report``)."""
        assert isinstance(report, ReplayReport)
        settings = get_scheme(benchmark).settings(benchmark)
        report.stopping_policy = str(getattr(settings, "stopping_policy", ""))
        report.released_labels = sum(len(values) for values in self.released.values())
        report.labels_drawn = self.drawn
        report.labels_beyond_release = self.beyond
        report.candidates_exhausted = len(self.exhausted)
        report.hits_returned = self.returned

    def settle(self) -> list[int]:
        """Candidates whose labels ran out since the last call: when the settings let candidates stop
        early, moved out of the rounds before the refresh that follows plans another round for them
        (dropped if no released label drawn was an accept, scored otherwise)."""
        ran_out = sorted(self._pending - self.exhausted)
        self._pending.clear()
        self.exhausted.update(ran_out)
        if not ran_out or not self.settle_exhausted:
            return ran_out
        open_stages = [CandidateStage.REDUCE, CandidateStage.SCORE]
        accepted = {pk for pk in ran_out if "accept" in self.released[pk]}
        Candidate.objects.filter(pk__in=sorted(accepted), stage__in=open_stages).update(stage=CandidateStage.FINAL)
        Candidate.objects.filter(pk__in=[pk for pk in ran_out if pk not in accepted], stage__in=open_stages).update(
            stage=CandidateStage.DROPPED
        )
        return ran_out


class _LabelsLeft(Mapping[int, int]):
    """The released labels each candidate still has to draw, read live from the replay's queues."""

    def __init__(self, queues: dict[int, list[str]]) -> None:
        self._queues = queues

    def __getitem__(self, candidate_id: int) -> int:
        return len(self._queues[candidate_id])

    def __iter__(self) -> Iterator[int]:
        return iter(self._queues)

    def __len__(self) -> int:
        return len(self._queues)


def replay_crowd(
    *,
    benchmark: Benchmark,
    labels: Mapping[tuple[str, str], tuple[str, ...]],
    name: str,
    seed: int,
    workers: int,
    stops_early: bool,
) -> ReplayCrowd:
    """The replay of ``labels`` (what the scheme's ``ReplaySource`` read) on the benchmark's
    candidates, each candidate's order shuffled by the seed and its keys. A candidate of the
    benchmark missing from the file is an error naming the first few."""
    if workers < 1:
        raise SimulationError("--workers must be at least 1")
    rows = (
        Candidate.objects.filter(target__benchmark=benchmark)
        .exclude(stage=CandidateStage.EXCLUDED)
        .values_list("pk", "target__external_id", "normalized")
        .order_by("pk")
    )
    released: dict[int, tuple[str, ...]] = {}
    queues: dict[int, list[str]] = {}
    unmatched: list[tuple[str, str]] = []
    for pk, target_id, normalized in rows:
        values = labels.get((target_id, normalized))
        if values is None:
            unmatched.append((target_id, normalized))
            continue
        order = list(values)
        random.Random(f"{seed}:{target_id}:{normalized}").shuffle(order)
        released[pk] = values
        # Drawn from the end: the shuffled order reversed.
        queues[pk] = order[::-1]
    if unmatched:
        shown = "; ".join(f"target {target!r}, candidate {text!r}" for target, text in unmatched[:SHOWN_UNMATCHED])
        more = f" and {len(unmatched) - SHOWN_UNMATCHED} more" if len(unmatched) > SHOWN_UNMATCHED else ""
        raise SimulationError(
            f"{name}: {len(unmatched)} candidate(s) of benchmark {benchmark.name!r} are not in the file "
            f"(matched by target id and candidate text): {shown}{more}"
        )
    return ReplayCrowd(
        name=name,
        seed=seed,
        released=released,
        queues=queues,
        settle_exhausted=stops_early,
        workers=workers,
        # A candidate the release left without a label has run out before the first draw.
        _pending={pk for pk, values in released.items() if not values},
    )


def crowd_replay(
    *,
    benchmark: Benchmark,
    path: str | os.PathLike[str],
    seed: int = 0,
    workers: int = DEFAULT_REPLAY_WORKERS,
    targets: int | None = None,
    progress: Progress | None = None,
    wave: int | None = DEFAULT_REPLAY_WAVE,
) -> ReplayReport:
    """Collect the benchmark by replaying the labels of the released file at ``path`` through the real
    claim / submit services (``crowd_simulate`` with a replay crowd of ``workers``, ``wave`` targets
    at a time when it makes the first batch), and report."""
    name = source_name(path)
    scheme = get_scheme(benchmark)
    source = scheme_replay(scheme)
    if source is None:
        raise SimulationError(f"benchmark {benchmark.name!r} ({scheme.title}) has no released labels to replay")
    try:
        labels = source.read(path)
    except ImportFailed as error:
        raise SimulationError(str(error)) from None
    stops_early = source.stops_early(scheme.settings(benchmark))
    crowd = replay_crowd(
        benchmark=benchmark, labels=labels, name=name, seed=seed, workers=workers, stops_early=stops_early
    )
    # The rounds the refreshes plan ask no more of a candidate than its release still holds.
    left = REPLAY_LABELS_LEFT.set(_LabelsLeft(crowd.queues))
    try:
        report = crowd_simulate(
            benchmark=benchmark,
            honest=0,
            spammers=0,
            seed=seed,
            targets=targets,
            progress=progress,
            replay=crowd,
            wave=wave,
        )
    finally:
        REPLAY_LABELS_LEFT.reset(left)
    assert isinstance(report, ReplayReport)
    return report
