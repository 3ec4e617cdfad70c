"""What is judged: benchmarks, contexts, targets, candidates, workers and labels (docs/design.md §2)."""

from __future__ import annotations

import hashlib
import re
from decimal import Decimal
from typing import Any, ClassVar

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import MD5

_SPACES = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    """Whitespace-folded, case-folded text: the key contexts are de-duplicated by."""
    return _SPACES.sub(" ", text).strip().casefold()


def normalize_candidate(text: str) -> str:
    """Candidates are unique per target up to case and surrounding or repeated whitespace."""
    return _SPACES.sub(" ", text).strip().casefold()


def text_digest(text: str) -> str:
    return hashlib.sha1(normalize_text(text).encode("utf-8")).hexdigest()


# The annotation schemes a benchmark may take, name -> title, and the one a new benchmark takes
# when none is named. ``schemes.register`` fills them: this room sits below ``schemes`` and cannot
# ask its registry, so the registry tells it. ``Benchmark.clean`` checks against them, the forms
# offer them.
_BENCHMARK_SCHEMES: dict[str, str] = {}
_DEFAULT_SCHEME: list[str] = []


def scheme_offer(*, name: str, title: str, default: bool = False) -> None:
    """Let benchmarks take the scheme ``name``; ``default``: new benchmarks take it unless told otherwise."""
    _BENCHMARK_SCHEMES[name] = title
    if default:
        _DEFAULT_SCHEME[:] = [name]


def scheme_withdraw(name: str) -> None:
    _BENCHMARK_SCHEMES.pop(name, None)
    if [name] == _DEFAULT_SCHEME:
        _DEFAULT_SCHEME.clear()


def scheme_choices() -> list[tuple[str, str]]:
    """(name, title) of every scheme a benchmark may take, by name."""
    return sorted(_BENCHMARK_SCHEMES.items())


def default_scheme() -> str:
    """The scheme a new benchmark takes when none is named: the one offered as the default, else
    the first by name ("" while no scheme is offered, which ``Benchmark.clean`` refuses)."""
    if _DEFAULT_SCHEME:
        return _DEFAULT_SCHEME[0]
    return min(_BENCHMARK_SCHEMES, default="")


class PartOfSpeech(models.TextChoices):
    NOUN = "noun", "noun"
    VERB = "verb", "verb"
    ADJECTIVE = "adj", "adjective"
    ADVERB = "adv", "adverb"


class Benchmark(models.Model):
    """A named collection of contexts and its collection settings (docs/design.md §2)."""

    name = models.SlugField(max_length=100, unique=True)
    title = models.CharField(max_length=200, blank=True)
    description = models.TextField(blank=True)
    # The language of the texts, a BCP 47 tag: the annotator's page marks the context with it.
    language = models.CharField(
        max_length=35,
        default="en",
        validators=[RegexValidator(r"^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$", "a language tag such as en or pt-BR")],
        help_text="language of the texts, e.g. en, de, ar",
    )
    # The name of a registered annotation scheme (``scheme_choices``; checked by ``clean``).
    scheme = models.CharField(max_length=16, default=default_scheme)
    # The scheme's own settings (schemes.get_scheme(benchmark).settings), e.g. SWORDS's labels per
    # step; a missing key means the scheme's default.
    scheme_settings = models.JSONField(default=dict, blank=True)
    reward = models.DecimalField(max_digits=6, decimal_places=2, default=Decimal("0.10"))
    seed = models.IntegerField(default=0)
    # Small teams cannot give every candidate ten different people; they may relax the rule
    # that a worker is never offered a HIT with a candidate they already judged (docs/design.md §3).
    distinct_workers_per_candidate = models.BooleanField(default=True)
    # File-level facts of imported data that a faithful export needs back, e.g.
    # {"swords": {"substitutes_lemmatized": true}} (docs/formats.md).
    extra = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    # How a row reaches its benchmark (see annotation.access); "" for the benchmark itself.
    benchmark_path: ClassVar[str] = ""

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=Q(reward__gte=0), name="benchmark_reward_not_negative"),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        if self.scheme not in _BENCHMARK_SCHEMES:
            known = ", ".join(sorted(_BENCHMARK_SCHEMES)) or "none"
            raise ValidationError({"scheme": f"no annotation scheme is registered as {self.scheme!r}; known: {known}"})

    def get_scheme_display(self) -> str:
        """The title of the benchmark's scheme, as the scheme registered it (its name if none did)."""
        return _BENCHMARK_SCHEMES.get(self.scheme, self.scheme)


class Role(models.IntegerChoices):
    """What a researcher may do in a benchmark (docs/permissions.md); each role includes the ones below."""

    VIEWER = 10, "viewer"
    EDITOR = 20, "editor"
    OWNER = 30, "owner"


class BenchmarkMember(models.Model):
    """A researcher's role in a benchmark. A benchmark without an owner row is shared: every
    researcher works in it as before permissions existed (docs/permissions.md)."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="members")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="benchmark_roles")
    role = models.PositiveSmallIntegerField(choices=Role.choices)
    granted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    granted_at = models.DateTimeField(auto_now=True)

    benchmark_path: ClassVar[str] = "benchmark"

    class Meta:
        ordering = ["benchmark", "-role", "user__username"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "user"], name="benchmark_member_once"),
            models.CheckConstraint(condition=Q(role__in=[10, 20, 30]), name="benchmark_member_known_role"),
        ]

    def __str__(self) -> str:
        return f"{self.user} ({Role(self.role).label}) in {self.benchmark}"


class Context(models.Model):
    """One to three sentences of text, de-duplicated by normalised text within a benchmark."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="contexts")
    text = models.TextField()
    digest = models.CharField(max_length=40, editable=False, help_text="SHA-1 of the normalised text")
    external_id = models.CharField(max_length=200, blank=True, help_text="Id in the imported file")
    extra = models.JSONField(default=dict, blank=True)

    benchmark_path: ClassVar[str] = "benchmark"

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "digest"], name="context_unique_text_per_benchmark"),
        ]

    def __str__(self) -> str:
        return self.text[:80]

    def save(self, *args: object, **kwargs: object) -> None:
        # The digest is derived data of the row itself, not a side effect on other rows.
        self.digest = text_digest(self.text)
        super().save(*args, **kwargs)  # type: ignore[arg-type]


class TargetStage(models.TextChoices):
    """Where a target stands (docs/design.md §6): collecting its work, collecting more for the
    candidates that went on, or done. The labels are neutral (the admin's, and wherever no benchmark
    is at hand); a page names the stages in its scheme's words (``target_stage_names``)."""

    REDUCE = "reduce", "collecting"
    SCORE = "score", "collecting more"
    DONE = "done", "done"


class Target(models.Model):
    """A word or phrase at a character offset in a context."""

    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="targets")
    # No index of its own: the unique (benchmark, id) below serves every read of a benchmark's targets
    # (Meta below).
    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="targets", db_index=False)
    # A word or phrase; a whole sentence where the sentence is the item (Smart Word Suggestions), as
    # long as IMPORT_MAX_TEXT_LENGTH lets it be: unbounded here, and unique through its MD5 below,
    # since an index entry holds at most about 2,700 bytes.
    word = models.TextField()
    offset = models.PositiveIntegerField()
    lemma = models.CharField(max_length=200, blank=True)
    pos = models.CharField(max_length=4, choices=PartOfSpeech.choices)
    stage = models.CharField(max_length=8, choices=TargetStage.choices, default=TargetStage.REDUCE)
    external_id = models.CharField(max_length=200, blank=True)
    # CEFR level of the target (ProLex), A1..C2.
    cefr = models.CharField(max_length=2, blank=True)
    extra = models.JSONField(default=dict, blank=True)

    benchmark_path: ClassVar[str] = "benchmark"

    class Meta:
        constraints = [
            models.UniqueConstraint(F("context"), F("offset"), MD5("word"), F("pos"), name="target_unique_in_context"),
            models.CheckConstraint(condition=~Q(word=""), name="target_word_not_empty"),
            # What a candidate's (target, benchmark) refers to (Candidate.benchmark; PostgreSQL takes a
            # key's columns in any order): its id is unique already, so this lets the pair be a foreign
            # key, and, the benchmark first, it is the index of a benchmark's targets in id order
            # (docs/design.md §7, "Candidates by benchmark").
            models.UniqueConstraint(fields=["benchmark", "id"], name="target_with_benchmark"),
        ]
        # No index leading with the benchmark but the unique (benchmark, id): on a small or freshly
        # emptied table the planner may take any of them, at a tie, for the check of a candidate's key,
        # and one not ending with the id reads a benchmark's targets per candidate (docs/design.md §7,
        # "Candidates by benchmark"). A benchmark's targets of one stage are read through it too.

    def __str__(self) -> str:
        return f"{self.word} ({self.pos})"

    def clean(self) -> None:
        # A missing context, word or offset is already named by the field's own check; there is
        # nothing to compare then.
        if self.context_id is None or self.offset is None or not self.word:
            return
        if self.benchmark_id is not None and self.context.benchmark_id != self.benchmark_id:
            # A target is a word of one of its benchmark's contexts (docs/design.md §2).
            raise ValidationError({"context": "the context is not one of the target's benchmark's"})
        text = self.context.text
        if text[self.offset : self.offset + len(self.word)] != self.word:
            raise ValidationError({"offset": f"offset {self.offset} does not point at {self.word!r} in the context"})


class CandidateStage(models.TextChoices):
    """Where a candidate stands: still collecting, collecting more, dropped, or scored in full. The
    labels are neutral; a page names the stages in its scheme's words (``candidate_stage_names``)."""

    REDUCE = "reduce", "collecting"
    SCORE = "score", "collecting more"
    DROPPED = "dropped", "dropped"
    FINAL = "final", "scored"
    # A researcher's decision, usually on an annotator's flag (docs/annotator.md): never collected
    # again, left out of statistics and scores; the pipeline never moves it to another stage.
    EXCLUDED = "excluded", "excluded by a researcher"


class Lemma(models.Model):
    """WordNet's lemma of a text for each of WordNet's parts of speech it was asked for, stored once
    and shared by every benchmark (docs/design.md §10, "Stored lemmas"): the evaluation reads it with
    the candidates instead of lemmatising each candidate on every computation. A column is null
    until a reader asks for that part of speech; ``annotation.wordnet.stored`` fills it. The lemma
    is the text's as WordNet 3.0 gives it, before any lower-casing (``annotation.wordnet.lemmatize``)."""

    # As long as a candidate's text: the candidates are joined to their lemmas on it.
    text = models.CharField(max_length=500)
    noun = models.TextField(null=True, blank=True)
    verb = models.TextField(null=True, blank=True)
    adj = models.TextField(null=True, blank=True)
    adv = models.TextField(null=True, blank=True)

    class Meta:
        # A constraint rather than ``unique=True``: the join reads by equality alone, so PostgreSQL's
        # second index for LIKE would only slow the writes.
        constraints = [models.UniqueConstraint(fields=["text"], name="lemma_unique_text")]

    def __str__(self) -> str:
        return self.text


class CandidateQuerySet(models.QuerySet["Candidate"]):
    def bulk_create(self, objs, *args, **kwargs):  # type: ignore[no-untyped-def, override]
        """Candidates written through the ORM name their target's benchmark when not given: from the
        target at hand, else one statement for all; the hot writers (an import's COPY, a proposal)
        name it themselves (docs/design.md §7, "Candidates by benchmark")."""
        objs = list(objs)
        missing: set[int] = set()
        for candidate in objs:
            if candidate.benchmark_id is None:
                if Candidate.target.is_cached(candidate) and candidate.target is not None:
                    candidate.benchmark_id = candidate.target.benchmark_id
                else:
                    missing.add(candidate.target_id)
        if missing:
            benchmark_of = dict(Target.objects.filter(pk__in=missing).values_list("pk", "benchmark_id"))
            for candidate in objs:
                if candidate.benchmark_id is None:
                    candidate.benchmark_id = benchmark_of.get(candidate.target_id)
        return super().bulk_create(objs, *args, **kwargs)


def _benchmark_copy() -> models.ForeignKey[Benchmark, Benchmark]:
    """A row's copy of its benchmark, kept by every writer so that one benchmark's rows are one range
    of an index (a candidate's and a label's; docs/design.md §7): no index of its own (the row's
    indexes lead with it), no key to the benchmark (a key would lock its row for every row written),
    not edited by hand."""
    return models.ForeignKey(
        Benchmark,
        on_delete=models.DO_NOTHING,
        related_name="+",
        db_index=False,
        db_constraint=False,
        editable=False,
    )


class Candidate(models.Model):
    """A proposed substitute for a target, with the set of its sources."""

    # Its foreign key in the database is the pair (target, benchmark) below, not the target alone.
    target = models.ForeignKey(Target, on_delete=models.CASCADE, related_name="candidates", db_constraint=False)
    # The target's benchmark, kept on the candidate so that one benchmark's candidates are one range of
    # an index whatever other benchmarks hold (docs/design.md §7, "Candidates by benchmark"): every
    # writer sets it from the target. On PostgreSQL the pair (target, benchmark) is a foreign key to the
    # target's (id, benchmark) (migration 0034), in place of the target's own: a candidate naming
    # another benchmark than its target's cannot be stored, a target moved to another benchmark takes
    # its candidates along, and no writer locks the benchmark's row. Deleting a benchmark deletes its
    # candidates through their targets.
    benchmark = _benchmark_copy()
    # Thesaurus entries can be long phrases: SWORDS v1.1 dev has one of 326 characters.
    text = models.CharField(max_length=500)
    normalized = models.CharField(max_length=500, editable=False)
    sources = models.JSONField(default=list, blank=True, help_text="sorted list, e.g. ['coinco', 'thesaurus']")
    stage = models.CharField(max_length=8, choices=CandidateStage.choices, default=CandidateStage.REDUCE)
    external_id = models.CharField(max_length=200, blank=True)
    # CEFR level of the substitute (ProLex), A1..C2.
    cefr = models.CharField(max_length=2, blank=True)
    extra = models.JSONField(default=dict, blank=True)
    # The stored lemmas of its text: no column, joined on the text (docs/design.md §10, "Stored
    # lemmas"); null where none is stored yet.
    lemmas = models.ForeignObject(
        Lemma, on_delete=models.DO_NOTHING, from_fields=["text"], to_fields=["text"], null=True, related_name="+"
    )

    benchmark_path: ClassVar[str] = "benchmark"

    objects = CandidateQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["target", "normalized"], name="candidate_unique_per_target"),
            models.CheckConstraint(condition=~Q(normalized=""), name="candidate_not_empty"),
        ]
        indexes = [
            models.Index(fields=["target", "stage"]),
            # The data browser's pages of a benchmark's candidates and their count walk it in id order
            # and stop at a page's rows, rather than stepping over other benchmarks' candidates
            # (docs/design.md §7, "Candidates by benchmark").
            models.Index(fields=["benchmark", "id"], name="candidate_by_benchmark"),
        ]

    def __str__(self) -> str:
        return self.text

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.normalized = normalize_candidate(self.text)
        fields = kwargs.get("update_fields")
        if fields is None or {"target", "target_id", "benchmark", "benchmark_id"} & set(fields):
            # Saved one by one (the admin, a script): the benchmark is always the target's, also
            # after the target was changed (docs/design.md §7, "Candidates by benchmark").
            cached = self.target if Candidate.target.is_cached(self) else None
            if cached is not None and cached.pk == self.target_id and cached.benchmark_id is not None:
                self.benchmark_id = cached.benchmark_id
            else:
                self.benchmark_id = Target.objects.values_list("benchmark_id", flat=True).get(pk=self.target_id)
            if fields is not None:
                kwargs["update_fields"] = {*fields, "benchmark"}
        super().save(*args, **kwargs)


class WorkerKind(models.TextChoices):
    LOCAL = "local", "local account"
    SIMULATED = "simulated", "simulated worker"
    IMPORTED = "imported", "worker named in an imported file"


# The kinds of worker a paid crowd's link brings (its backend's ``worker_kind``, offered by the crowds'
# registry when the apps are ready, as schemes offer themselves): MTurk's workers, Prolific's participants.
_CROWD_WORKER_KINDS: dict[str, str] = {}


def worker_kind_offer(*, kind: str, label: str) -> None:
    _CROWD_WORKER_KINDS[kind] = label


def worker_kind_choices() -> list[tuple[str, str]]:
    """Every kind of worker: this platform's own, then the crowds' by kind."""
    return [*WorkerKind.choices, *sorted(_CROWD_WORKER_KINDS.items())]


class Worker(models.Model):
    """Whoever gives labels: a local account, an MTurk worker id, or a simulated worker."""

    kind = models.CharField(max_length=10, choices=worker_kind_choices)
    external_id = models.CharField(max_length=200, help_text="username, MTurk WorkerId, or simulated name")
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="worker"
    )
    blocked = models.BooleanField(default=False, help_text="a blocked worker is offered no more HITs")
    blocked_reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["kind", "external_id"], name="worker_unique_id_per_kind")]

    def __str__(self) -> str:
        return f"{self.kind}:{self.external_id}"


class LabelValue(models.TextChoices):
    """SWORDS's three answers; ProLex's 1 / -1 / 0 map to accept / reject / abstain."""

    ACCEPT = "accept", "accept"
    REJECT = "reject", "reject"
    ABSTAIN = "abstain", "abstain"


class LabelQuerySet(models.QuerySet["Label"]):
    def bulk_create(self, objs, *args, **kwargs):  # type: ignore[no-untyped-def, override]
        """Labels written through the ORM name their candidate's benchmark when not given (one
        statement for all); the hot writers (a submit, an import's COPY) name it themselves."""
        objs = list(objs)
        missing = {label.candidate_id for label in objs if label.benchmark_id is None}
        if missing:
            benchmark_of = dict(Candidate.objects.filter(pk__in=missing).values_list("pk", "target__benchmark_id"))
            for label in objs:
                if label.benchmark_id is None:
                    label.benchmark_id = benchmark_of.get(label.candidate_id)
        return super().bulk_create(objs, *args, **kwargs)


class Label(models.Model):
    """One annotator's judgment of one candidate.

    A label comes either from an assignment (collected here) or from an imported file
    (``origin`` names it, ``position`` keeps the collection order). Labels of filtered
    assignments are kept but do not count (docs/design.md §5).
    """

    # Without an index of its own: the (candidate, position) index leads with it. Every label written
    # (a submit, 250,000 at an import) maintains each index of the table.
    candidate = models.ForeignKey(Candidate, on_delete=models.CASCADE, related_name="labels", db_index=False)
    # The candidate's benchmark, kept on the label so that one benchmark's labels are one range of an
    # index whatever other benchmarks hold (docs/design.md §7, "Labels by benchmark"): every writer
    # sets it from the candidate's target. No foreign key constraint: each label written would lock
    # the benchmark's row, and every submit of a benchmark would take that one lock. Deleting a
    # benchmark deletes its labels through their candidates.
    benchmark = _benchmark_copy()
    value = models.CharField(max_length=8, choices=LabelValue.choices)
    step = models.PositiveSmallIntegerField(default=2, help_text="pipeline step it was collected in (2 or 3)")
    # Indexed only where set (label_worker_when_set): imported labels have no worker, and an import
    # writes hundreds of thousands of them.
    worker = models.ForeignKey(
        Worker, null=True, blank=True, on_delete=models.PROTECT, related_name="labels", db_index=False
    )
    # Without an index of its own: the unique (assignment, candidate) index leads with it.
    assignment = models.ForeignKey(
        "hits.Assignment", null=True, blank=True, on_delete=models.PROTECT, related_name="labels", db_index=False
    )
    origin = models.CharField(max_length=200, blank=True, help_text="imported file it came from")
    position = models.PositiveIntegerField(default=0, help_text="order of collection among the candidate's labels")
    # Imported SWORDS labels such as TRUE_IMPLICIT keep their original spelling here.
    raw_value = models.CharField(max_length=20, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    benchmark_path: ClassVar[str] = "benchmark"

    objects = LabelQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["assignment", "candidate"],
                condition=Q(assignment__isnull=False),
                name="label_once_per_candidate_per_assignment",
            ),
            models.UniqueConstraint(
                fields=["candidate", "origin", "position"],
                condition=Q(assignment__isnull=True),
                name="label_imported_once_per_position",
            ),
            models.CheckConstraint(
                condition=Q(assignment__isnull=False) | ~Q(origin=""),
                name="label_has_assignment_or_origin",
            ),
        ]
        indexes = [
            models.Index(fields=["candidate", "position"]),
            # Serves every "labels of this worker" lookup (worker_id = X implies it is not null).
            models.Index(fields=["worker"], condition=Q(worker__isnull=False), name="label_worker_when_set"),
            # The data browser's pages of a benchmark's labels walk these in order and stop at a page's
            # rows, by id or by value, rather than sorting every label of the benchmark or stepping over
            # other benchmarks' labels (docs/benchmarks.md, "Data browser"; "Labels by benchmark").
            models.Index(fields=["benchmark", "id"], name="label_by_benchmark"),
            models.Index(fields=["benchmark", "value", "id"], name="label_by_benchmark_value"),
        ]

    def __str__(self) -> str:
        return f"{self.value} for {self.candidate_id}"

    def save(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        # Saved one by one (the admin, a script): the benchmark is always the candidate's, also after
        # the candidate was changed (docs/design.md §7, "Labels by benchmark").
        self.benchmark_id = Candidate.objects.values_list("target__benchmark_id", flat=True).get(pk=self.candidate_id)
        super().save(*args, **kwargs)


class CandidateTally(models.Model):
    """A candidate's valid labels by value (docs/design.md §7, "Tallies"): those ``VALID_LABEL``
    counts (imported, or collected in an assignment spam filtering kept). Kept by
    ``annotation.tallies`` in the transaction of every change of a label or of its assignment's
    filtering; a candidate with no row has no valid label. What the data browser's candidates
    table shows and sorts by (labels, accepts, score), read from a column rather than grouped."""

    benchmark_path: ClassVar[str] = "candidate__benchmark"

    candidate = models.OneToOneField(Candidate, on_delete=models.CASCADE, primary_key=True, related_name="tally")
    accepts = models.PositiveIntegerField(default=0)
    rejects = models.PositiveIntegerField(default=0)
    abstains = models.PositiveIntegerField(default=0)
    labels = models.PositiveIntegerField(default=0)
    # Of them, those collected in step 2 (``Label.step``) and their accepts: what the pipeline's
    # progress and HIT generation count per step (schemes.swords.progress.valid_label_counts).
    step2_labels = models.PositiveIntegerField(default=0)
    step2_accepts = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(labels=F("accepts") + F("rejects") + F("abstains")), name="candidate_tally_sums"
            ),
            models.CheckConstraint(
                condition=Q(step2_accepts__lte=F("step2_labels"), step2_labels__lte=F("labels")),
                name="candidate_tally_step2_within",
            ),
        ]

    def __str__(self) -> str:
        return f"candidate {self.candidate_id}: {self.accepts}/{self.rejects}/{self.abstains}"


class WorkerTally(models.Model):
    """A worker's labels in a benchmark, counted or not (docs/design.md §7, "Tallies"): what the data
    browser's workers table shows and sorts by. Kept by ``annotation.tallies`` with every collected
    label (imported labels name no worker); a worker with no row has no label there."""

    benchmark_path: ClassVar[str] = "benchmark"

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="+", db_index=False)
    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="tallies")
    labels = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["benchmark", "worker"], name="worker_tally_once")]

    def __str__(self) -> str:
        return f"worker {self.worker_id} in benchmark {self.benchmark_id}: {self.labels} labels"


class Import(models.Model):
    """One origin of imported data in a benchmark, and the rows it brought (docs/design.md §2).

    An import under an origin that exists adds to this record, so the same file imported again
    stays one import. The rows are those the import created or found already there: a row that
    several imports bring belongs to each, and removing one import keeps it for the others.
    """

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="imports")
    origin = models.CharField(max_length=200, help_text="what its labels are kept under (Label.origin)")
    # Set when its labels were declared a set of their own beside another origin's labels of the
    # same candidates (a re-annotation), rather than refused as the same labels counted twice.
    new_label_set = models.BooleanField(default=False)
    # Where the rows came from beyond the origin's name (docs/design.md §2): for candidates a
    # system proposed or a language model gave, the system and its result file, or the endpoint,
    # model, prompt and its hash; never a secret such as an API key.
    provenance = models.JSONField(default=dict, blank=True)
    # The last file imported under this origin, for a re-import of the same bytes that changes
    # nothing (docs/design.md §2): its SHA-256, and what importing it again reports and finds
    # (format, counts, file facts, the rows the import holds), blank when written otherwise.
    file_sha256 = models.CharField(max_length=64, blank=True)
    file_result = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    contexts = models.ManyToManyField(Context, related_name="imports")
    targets = models.ManyToManyField(Target, related_name="imports")
    candidates = models.ManyToManyField(Candidate, related_name="imports")

    benchmark_path: ClassVar[str] = "benchmark"

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [models.UniqueConstraint(fields=["benchmark", "origin"], name="import_unique_origin")]

    def __str__(self) -> str:
        return f"{self.origin} in {self.benchmark_id}"


class ImportJobStatus(models.TextChoices):
    PENDING = "pending", "pending"
    RUNNING = "running", "running"
    DONE = "done", "done"
    FAILED = "failed", "failed"


class ImportJob(models.Model):
    """An uploaded file imported by a Celery task (``annotation.tasks.import_run``), so the request
    that brought it returns at once. The upload waits under MEDIA_ROOT (``path``) until the job has
    read it, and is deleted then, whether the import succeeded or not (docs/formats.md, "Import jobs").

    ``benchmark`` is set once the benchmark exists: at once when the import goes into an existing
    one, when the import has created it otherwise (until then only its creator sees the job).
    """

    benchmark_name = models.CharField(max_length=100)
    benchmark = models.ForeignKey(
        Benchmark, null=True, blank=True, on_delete=models.CASCADE, related_name="import_jobs"
    )
    file_name = models.CharField(max_length=255, help_text="the uploaded file's name, shown in messages")
    path = models.CharField(max_length=500, blank=True, help_text="the stored upload under MEDIA_ROOT; blank once read")
    format = models.CharField(max_length=20, default="auto")
    origin = models.CharField(max_length=200, blank=True)
    new_label_set = models.BooleanField(default=False)
    # A job that reads no file but adds candidates from a source (``format`` names it: wordnet, llm):
    # what it asks, e.g. {"targets": [...], "model": {"model": ..., "per_target": ..., "prompt": ...}}.
    parameters = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=8, choices=ImportJobStatus.choices, default=ImportJobStatus.PENDING)
    # ImportReport.as_dict() once done; ImportFailed.as_dict() (detail, file, line, item, field) once failed.
    report = models.JSONField(null=True, blank=True)
    error = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    benchmark_path: ClassVar[str] = "benchmark"

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"import job {self.pk} of {self.file_name} into {self.benchmark_name}"


class ActivityKind(models.TextChoices):
    """What a researcher (or the platform on their behalf) did to a benchmark (the activity log)."""

    BENCHMARK_CREATED = "benchmark_created", "created the benchmark"
    IMPORTED = "imported", "imported"
    IMPORT_REMOVED = "import_removed", "removed an import"
    BATCH_CREATED = "batch_created", "created a batch"
    BATCH_CLOSED = "batch_closed", "closed a batch"
    BATCH_REOPENED = "batch_reopened", "reopened a batch"
    BATCH_PAUSED = "batch_paused", "paused a batch"
    BATCH_RESUMED = "batch_resumed", "resumed a batch"
    BUDGET_REFUSED = "budget_refused", "stopped at the budget cap"
    PUBLISHED = "published", "published"
    APPROVED = "approved", "approved"
    REJECTED = "rejected", "rejected"
    BONUSED = "bonused", "gave a bonus"
    BLOCKED = "blocked", "blocked a worker"
    UNBLOCKED = "unblocked", "unblocked a worker"
    CANDIDATE_EXCLUDED = "candidate_excluded", "excluded a candidate"
    CANDIDATE_INCLUDED = "candidate_included", "brought back a candidate"
    ANNOTATORS_NAMED = "annotators_named", "named annotators for a batch"
    SETTING_CHANGED = "setting_changed", "changed settings"
    EXPORTED = "exported", "exported"
    OVERRIDDEN = "overridden", "decided a candidate"
    OVERRIDE_REMOVED = "override_removed", "withdrew a decision on a candidate"
    ITEM_RESOLVED = "item_resolved", "marked an item resolved"
    VIEW_SAVED = "view_saved", "saved a view of the data"
    VIEW_RENAMED = "view_renamed", "renamed a saved view"
    VIEW_DELETED = "view_deleted", "deleted a saved view"


class Activity(models.Model):
    """One entry of a benchmark's activity log: who did what, when, and with what result.

    It lives in the lowest room so that every room's services can write it (they import
    annotation, never each other upwards); the service that does the operation writes the entry,
    in the operation's transaction where it has one, so the log never claims what did not happen.
    ``actor`` is None for the platform itself (a sync, the pipeline, a command run without a user);
    ``actor_name`` keeps the name if the account is removed later.
    """

    benchmark_path: ClassVar[str] = "benchmark"

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="activities")
    kind = models.CharField(max_length=20, choices=ActivityKind.choices)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_name = models.CharField(max_length=150, blank=True)
    summary = models.CharField(max_length=500, help_text="what was done and its result, in words")
    # The result in figures, e.g. {"batch": 12, "hits": 40} or {"changed": {"reward": ["0.10", "0.12"]}}.
    result = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "activities"
        indexes = [
            models.Index(fields=["benchmark", "-created_at"], name="activity_latest"),
            models.Index(fields=["benchmark", "kind", "-created_at"], name="activity_by_kind"),
        ]

    def __str__(self) -> str:
        return f"{self.actor_name or 'platform'} {self.get_kind_display()} in {self.benchmark_id}: {self.summary}"


class RefreshQueued(models.Model):
    """A refresh of the touched work of this benchmark is queued and has not started yet.

    At most one such row per benchmark (its primary key), so a burst of submits queues one
    refresh, not one each (``annotation.refresh_requests``). The refresh deletes the row before it
    reads, so work arriving while it runs queues the next one. ``queued_at`` lets a row whose
    message was lost (a broker down at commit) be queued again once it is old.
    """

    benchmark_path: ClassVar[str] = "benchmark"

    benchmark = models.OneToOneField(Benchmark, on_delete=models.CASCADE, primary_key=True)
    queued_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"refresh of benchmark {self.benchmark_id} queued at {self.queued_at:%H:%M:%S}"


class RefreshTouched(models.Model):
    """A worker of this benchmark has work the refresh has not looked at yet.

    Written with each submit, removed by the refresh that looked at it, once that refresh has
    committed: a refresh that dies leaves the row for the next one. ``touches`` grows with every
    submit, so a refresh removes only the rows no submit touched while it ran.
    """

    benchmark_path: ClassVar[str] = "benchmark"

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="+")
    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="+")
    touches = models.PositiveBigIntegerField(default=1)
    # The targets of the work each touch brought (a list of ids, repeats possible), or None when a
    # touch did not name them (any target of the worker's work): what the figures kept per target
    # count again after these submits (annotation.changes.targets_changed).
    target_ids = models.JSONField(null=True, blank=True, default=None)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "worker"], name="refresh_touched_once_per_worker"),
        ]

    def __str__(self) -> str:
        return f"worker {self.worker_id} touched benchmark {self.benchmark_id} ({self.touches} submits)"


class SiteChanges(models.Model):
    """How many times something changed that researcher pages outside one benchmark show (docs/design.md
    §7, "Kept pages"): a benchmark made, renamed or deleted, a role granted or taken away, an account
    or its role groups changed. One row (id 1); ``annotation.changes.site_changed`` moves it in the
    transaction of each such change, to a number never given before. Only ever counts up."""

    changes = models.PositiveBigIntegerField(default=0)

    def __str__(self) -> str:
        return f"site changes: {self.changes}"


class BenchmarkChanges(models.Model):
    """How many times the benchmark's data changed outside the submits (docs/design.md §7: the
    researcher's pages read whole-benchmark figures once per change).

    ``annotation.changes.benchmark_changed`` adds one in the transaction of every change a
    researcher would see (each activity entry, each refresh that moved something, returned and
    expired work); the submits, which must not wait on each other for one row, move the key through
    their ``RefreshTouched`` rows instead (``annotation.changes.change_key``). Only ever counts up.
    """

    benchmark_path: ClassVar[str] = "benchmark"

    benchmark = models.OneToOneField(Benchmark, on_delete=models.CASCADE, primary_key=True, related_name="+")
    changes = models.PositiveBigIntegerField(default=0)

    def __str__(self) -> str:
        return f"benchmark {self.benchmark_id}: {self.changes} changes"


class BenchmarkChangeTargets(models.Model):
    """Which targets one move of a benchmark's change counter touched (docs/design.md §7,
    "Incremental figures"): ``target_ids`` (a sorted list), or null when the change may touch any
    target (an import, a setting, a whole refresh).

    Written by ``annotation.changes.benchmark_changed`` in the transaction of the change, so a change
    that rolls back leaves no row, and every move of the counter has its row. Figures kept per
    target read it to recompute only the targets changed since they were computed; rows older than
    twice ``BENCHMARK_FIGURES_BASE_MAX_AGE_SECONDS`` are removed.
    """

    benchmark_path: ClassVar[str] = "benchmark"

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="+", db_index=False)
    change = models.PositiveBigIntegerField()
    target_ids = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["benchmark", "change"], name="change_targets_by_change")]

    def __str__(self) -> str:
        touched = "every target" if self.target_ids is None else f"{len(self.target_ids)} targets"
        return f"benchmark {self.benchmark_id}, change {self.change}: {touched}"
