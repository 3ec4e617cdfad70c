"""The small interface every annotation scheme implements, and the plain values it speaks in.

A scheme says what an item of a HIT is and how a target's HITs are planned (with or without
controls), what a valid answer is, how answers become stored judgments and which of them are
control checks, which steps it runs and how many judgments each step collects, its typed settings,
and which templates render its annotator page. ``hits`` calls these and names none of a scheme's
values; ``review`` and ``analysis`` call the scheme's pure rules (advancement, scores).

Schemes sit just above ``annotation`` (imports run annotation <- schemes <- hits <- review <-
analysis), so nothing here may import ``hits`` or anything above it.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Protocol, Self

from django.core.exceptions import ValidationError

from schemes.steps import Step
from schemes.steps import main_step as main_step

if TYPE_CHECKING:
    from annotation.models import Benchmark
    from schemes.progress import CollectedWork, SchemeProgress, StageMoves


class UnknownScheme(LookupError):
    """No scheme is registered under that name."""


# ---- settings ---------------------------------------------------------------------------------


class SchemeSettingsError(ValidationError):
    """Settings that do not fit the scheme; ``message_dict`` maps each bad setting to why."""


def setting(
    default: Any,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    choices: tuple[str, ...] = (),
    help: str = "",
    label: str = "",
    unit: str = "",
) -> Any:
    """A settings field with its bounds (or, for a word, its ``choices``), checked by
    ``SchemeSettings.from_json``; ``label`` (a name for people), ``help`` (one line on what it does)
    and ``unit`` (what its number counts) are shown on the settings page."""
    metadata: dict[str, Any] = {"minimum": minimum, "maximum": maximum, "help": help, "label": label, "unit": unit}
    if choices:
        metadata["choices"] = choices
    return dataclasses.field(default=default, metadata=metadata)


def setting_label(field: dataclasses.Field[Any]) -> str:
    """The setting's name for people; its code name in words where a scheme gives none."""
    return str(field.metadata.get("label") or field.name.replace("_", " ").capitalize())


# Per settings class, the last settings ``SchemeSettings.from_json`` read, with ``_read_key`` of their JSON.
_LAST_READ: dict[type, tuple[tuple[Any, ...], Any]] = {}
_PLAIN_JSON = (bool, int, float, str, type(None))


def _read_key(data: Mapping[str, Any] | None) -> tuple[Any, ...] | None:
    """What ``SchemeSettings.from_json`` reads of ``data``: each key with its value's type and value
    (a float by its repr, which tells -0.0 and NaN apart); None for a value that is not a plain
    JSON scalar (read every time)."""
    if not data:
        return ()
    if type(data) is not dict:
        return None
    key = []
    for name, value in data.items():
        kind = type(value)
        if kind not in _PLAIN_JSON:
            return None
        key.append((name, kind, repr(value) if kind is float else value))
    return tuple(key)


@dataclass(frozen=True)
class SchemeSettings:
    """Base of a scheme's typed settings: a frozen dataclass of bools, ints and floats with bounds.

    Stored as JSON on ``Benchmark.scheme_settings``; a missing key takes its default, so adding a
    setting never needs a data migration. ``from_json`` is the one place settings are checked.
    """

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Self:
        # The settings of one benchmark are read on every claim and submit: the last read of each
        # class is kept, by the JSON's keys, types and values (``_read_key``), and settings are frozen.
        key = _read_key(data)
        if key is not None:
            last = _LAST_READ.get(cls)
            if last is not None and last[0] == key:
                return last[1]  # type: ignore[no-any-return]
        settings = cls._from_json(data)
        if key is not None:
            _LAST_READ[cls] = (key, settings)
        return settings

    @classmethod
    def _from_json(cls, data: Mapping[str, Any] | None) -> Self:
        data = dict(data or {})
        fields = {field.name: field for field in dataclasses.fields(cls)}
        errors: dict[str, list[str]] = {}
        for name in sorted(set(data) - set(fields)):
            errors[name] = [f"is not a setting of this scheme (known: {', '.join(sorted(fields))})"]
        values: dict[str, Any] = {}
        for name, field in fields.items():
            if name not in data:
                continue
            try:
                values[name] = _checked(data[name], field)
            except ValueError as error:
                errors[name] = [str(error)]
        if errors:
            raise SchemeSettingsError(errors)
        return cls(**values)

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def replace(self, **changes: Any) -> Self:
        """These settings with ``changes`` applied, checked as ``from_json`` checks them."""
        return self.from_json({**self.to_json(), **changes})

    @classmethod
    def wording(cls) -> dict[str, tuple[str, str]]:
        """(label, unit) of every setting, by name, for the settings page."""
        return {
            field.name: (setting_label(field), str(field.metadata.get("unit", ""))) for field in dataclasses.fields(cls)
        }

    @classmethod
    def describe(cls) -> list[tuple[str, Any, str]]:
        """(name, default, help) of every setting, for forms and documentation."""
        return [(field.name, field.default, field.metadata.get("help", "")) for field in dataclasses.fields(cls)]


def _checked(value: Any, field: dataclasses.Field[Any]) -> Any:
    kind = type(field.default)
    if kind is bool:
        if not isinstance(value, bool):
            raise ValueError("must be true or false")
    elif kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError("must be a whole number")
    elif kind is float:
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ValueError("must be a number")
        value = float(value)
    elif kind is str:
        if not isinstance(value, str):
            raise ValueError("must be a word")
        choices = field.metadata.get("choices", ())
        if choices and value not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}")
        return value
    minimum, maximum = field.metadata.get("minimum"), field.metadata.get("maximum")
    if minimum is not None and value < minimum:
        raise ValueError(f"must be at least {minimum}")
    if maximum is not None and value > maximum:
        raise ValueError(f"must be at most {maximum}")
    return value


# ---- planning ---------------------------------------------------------------------------------


class CandidateRef(NamedTuple):
    """A candidate as planning sees it: `key` (its normalised text) fixes the order before shuffling;
    `assignments` is how many assignments its HIT must collect (the labels it lacks; 0: the batch's)."""

    id: int
    text: str
    key: str
    assignments: int = 0


class TargetRef(NamedTuple):
    """A target as planning sees it."""

    id: int
    word: str
    lemma: str
    pos: str
    offset: int
    context_digest: str
    context_text: str


class PlannedItem(NamedTuple):
    """One row of a HIT: named tuples because a large batch plans ~50,000 of them.

    ``kind`` is the scheme's own word for the row; ``control`` marks a check whose expected answer
    the scheme knows (never shown as such to the annotator).
    """

    kind: str
    text: str
    candidate_id: int | None = None
    control: bool = False


@dataclass(frozen=True)
class PlannedHIT:
    """One HIT of a target: `part` numbers the target's HITs; items are in display order;
    `assignments` is how many it collects (0: the batch's ``assignments_per_hit``)."""

    part: int
    items: tuple[PlannedItem, ...]
    assignments: int = 0


TargetPlanner = Callable[[TargetRef, Sequence[CandidateRef]], list[PlannedHIT]]


@dataclass(frozen=True)
class StepWork:
    """What a step still needs: per target, the candidates to ask about (an empty list when the
    target itself is the item), each with the assignments it lacks; and, in the scheme's words, why
    the rest need nothing (``settled`` of them "already have their 3 valid step-2 labels"), and
    what brings work to the step when none is there yet (``empty_hint``)."""

    by_target: dict[int, list[CandidateRef]]
    settled: int = 0
    settled_reason: str = ""
    empty_hint: str = ""


# ---- answers ----------------------------------------------------------------------------------


class ItemRef(NamedTuple):
    """A HIT item as answer checking sees it."""

    id: int
    kind: str
    text: str
    candidate_id: int | None
    control: bool


class AnswersInvalid(ValidationError):
    """The answers do not cover the HIT exactly once with values the scheme accepts.

    ``missing`` lists the HIT's item ids left unanswered (in display order), ``unknown`` the ids
    that are not items of this HIT, ``invalid`` the item ids with a value the scheme refuses.
    """

    def __init__(
        self,
        message: str,
        *,
        missing: Sequence[int] = (),
        unknown: Sequence[Any] = (),
        invalid: Sequence[int] = (),
    ) -> None:
        super().__init__(message, code="invalid_answers")
        self.missing = list(missing)
        self.unknown = list(unknown)
        self.invalid = list(invalid)


class CleanAnswer(NamedTuple):
    """One item's answer once the scheme has checked it: ``value`` is a short word (indexed, shown
    in tables), ``data`` holds anything richer (spans, typed suggestions) as JSON."""

    value: str
    data: Any = None


class AnswerRefused(ValueError):
    """A structured answer that is not valid; the message tells the annotator what to fix."""


def answer_object(raw: Any, *, what: str) -> dict[str, Any]:
    """A structured answer as an object, from the page's JSON text or an API's object; ``what`` says
    what it must hold, for the message when it holds something else."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raise AnswerRefused("The answer could not be read; please give it again.") from None
    if not isinstance(raw, dict):
        raise AnswerRefused(f"The answer must list {what}.")
    return raw


class WithoutControls:
    """What a scheme without control items says about them: nobody is filtered by controls, and no
    answer is a control check."""

    title: ClassVar[str]

    def control_threshold(self, settings: SchemeSettings) -> float | None:
        return None

    def control_check(self, *, kind: str, value: str) -> tuple[bool, str]:
        raise ValueError(f"{self.title} has no controls")


def one_item_answer(*, items: Sequence[ItemRef], answers: Mapping[Any, Any], missing: str) -> tuple[ItemRef, Any]:
    """The HIT's one item and the answer given for it, for schemes of one item per HIT (a sentence
    to mark, a target to propose substitutes for); keys may be digit strings. ``missing`` is what
    the annotator is told when there is no answer."""
    [item] = items
    unknown = [key for key in answers if str(key) != str(item.id)]
    if unknown:
        raise AnswersInvalid(
            f"These answers are for items that are not part of this HIT: {', '.join(map(str, unknown))}.",
            unknown=unknown,
        )
    given = {str(key): value for key, value in answers.items()}
    if str(item.id) not in given:
        raise AnswersInvalid(missing, missing=[item.id])
    return item, given[str(item.id)]


class LabelRow(NamedTuple):
    """A judgment of a candidate to store as ``annotation.Label``."""

    candidate_id: int
    value: str


class ProposedCandidate(NamedTuple):
    """A candidate a submission proposes for its HIT's target, from ``source`` (e.g. "crowd")."""

    text: str
    source: str


@dataclass(frozen=True)
class Judgments:
    """What a submission means: the labels it adds, the candidates it proposes for its HIT's target
    (merged into the target's candidates, their source added), and how it did on its control checks."""

    labels: list[LabelRow]
    checks_correct: int = 0
    checks_total: int = 0
    candidates: list[ProposedCandidate] = dataclasses.field(default_factory=list)


# The keys the choice script moves between rows with (static/schemes/choices.js).
NAVIGATION_KEYS = frozenset("jk")


@dataclass(frozen=True)
class Choice:
    """One answer of a choice scheme: stored ``value``, shown ``label``, the keyboard ``keys`` that
    choose it (single characters, each shown on its button in this order), and the definition tied
    to it on the page. A key says what it records: ProLex's ``0`` records 0, whatever its position."""

    value: str
    label: str
    keys: tuple[str, ...]
    definition: str = ""

    def __post_init__(self) -> None:
        if not self.keys:
            raise ValueError(f"choice {self.value!r} has no key")
        for key in self.keys:
            # One printable character, never a letter the page moves with or one that needs Shift.
            if len(key) != 1 or not key.isprintable() or key.isspace() or key in NAVIGATION_KEYS or key != key.lower():
                raise ValueError(
                    f"choice {self.value!r}: {key!r} cannot be a key (one lower-case character, not j or k)"
                )


@dataclass(frozen=True)
class Editable:
    """What a batch's task design may change on a scheme's page besides its instructions and examples,
    which every page takes (docs/design.md §4.1): the words on the choices' buttons, the keys that
    press them. A choice's value, and so what an answer means, never changes."""

    choice_labels: bool = False
    choice_keys: bool = False


@dataclass(frozen=True)
class Page:
    """How the annotator's page shows a scheme: the question above the context (``{target}`` marks
    where the highlighted target goes), the template of the rows (given ``rows``, ``read_only`` and
    ``choices``; a row's ``selected`` is the answer as the page posts it), the instructions template
    (may be empty), the page script (a static path), and when to return a HIT. ``summary`` is the
    sentence an annotator's list of projects gives for the work (docs/annotator.md, "Projects")."""

    question: str
    items_template: str
    script: str
    instructions_template: str = ""
    choices: tuple[Choice, ...] = ()
    return_hint: str = ""
    # False when the rows' template shows the context itself (a page where the annotator marks
    # words in it): the shell then shows the question alone, with nothing highlighted.
    shows_context: bool = True
    summary: str = ""
    # How a researcher sees one assignment's answer to one item, read-only (the HIT's page): given
    # ``answer`` (its ``value`` and ``data``, None when there is none), ``item`` and ``choices``.
    # Every text it shows is escaped. The default shows a choice's label, else the stored value.
    answers_template: str = "schemes/_answer.html"
    # What the scheme's own templates compute from their values, by name (a sentence cut into the
    # tokens the page marks): ``{% page_helper "<scheme>" "<name>" value ... as found %}``
    # (schemes/templatetags/page_tags.py) calls it. The scheme's knowledge stays in its package.
    helpers: Mapping[str, Callable[..., Any]] = dataclasses.field(default_factory=dict)
    # What a batch's task design may change here (schemes.design): instructions only by default.
    editable: Editable = Editable()

    def __post_init__(self) -> None:
        keys = [key for choice in self.choices for key in choice.keys]
        shared = sorted({key for key in keys if keys.count(key) > 1})
        if shared:
            raise ValueError(f"keys {', '.join(shared)} choose more than one answer")

    def question_around_target(self) -> tuple[str, str]:
        """The question's text before and after the target, escaped separately by the template."""
        before, _, after = self.question.partition("{target}")
        return before, after


# ---- the qualification test ------------------------------------------------------------------


@dataclass(frozen=True)
class QualificationGold:
    """What a scheme's qualification test asks (docs/qualification.md), declared by a scheme that
    offers one as its ``qualification`` attribute; a scheme without it offers no test.

    ``expects``: the answers a gold item may expect, in the scheme's own words, each with the stored
    label it stands for (accept / reject, docs/design.md §2), in the order the scheme names them
    (SWORDS: accept, reject; ProLex: "1" -> accept, "-1" -> reject). A gold file or the API may name
    an expectation by either.
    ``answers``: the stored label each answer on the scheme's page stands for (a choice's value, as
    the page posts it -> its label).
    ``met_by``: for an expected label, the labels of the answers that meet it; a label not named here
    is met by itself alone (SWORDS and ProLex let an abstention meet an expected reject, as for the
    distractor control, docs/design.md §3: not knowing a word that does not fit is no error).
    """

    expects: Mapping[str, str]
    answers: Mapping[str, str]
    met_by: Mapping[str, frozenset[str]] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        labels = list(self.expects.values())
        if len(set(labels)) < 2 or len(set(labels)) != len(labels):
            # A test of one expected answer is passed by anyone who always gives it.
            raise ValueError("a qualification test expects at least two answers, each with a label of its own")
        words = [word.strip().lower() for word in self.expects]
        if len(set(words)) != len(words) or not all(words):
            raise ValueError("the words of the expected answers must be distinct and not empty")
        for word in words:
            if word in labels and self.expects_label(word) != word:
                raise ValueError(f"{word!r} names a label and expects another")
        for label in labels:
            if not any(self.meets(expected=label, answer=answer) for answer in self.answers):
                raise ValueError(f"no answer meets an expected {label!r}")

    @property
    def labels(self) -> tuple[str, ...]:
        """The stored labels a gold item may expect, in the scheme's order."""
        return tuple(self.expects.values())

    def expects_label(self, written: str) -> str | None:
        """The stored label a gold item's expectation names, in the scheme's words or as the stored
        label (without case or surrounding space); None when it names neither."""
        key = written.strip().lower()
        for word, label in self.expects.items():
            if key == word.strip().lower():
                return label
        return key if key in self.labels else None

    def word(self, label: str) -> str:
        """The scheme's word for an expected label (the label itself where it has none)."""
        return next((word for word, known in self.expects.items() if known == label), label)

    def describe(self) -> str:
        """The expectations a gold item may name, for an error: "1 or -1 (or accept, reject)"."""
        words = list(self.expects)
        said = ", ".join(words[:-1]) + f" or {words[-1]}"
        if words == list(self.labels):
            return said
        return f"{said} (or {', '.join(self.labels)})"

    def meets(self, *, expected: str, answer: str) -> bool:
        """Whether an answer on the scheme's page (a choice's value) meets an expected label."""
        label = self.answers.get(answer)
        return label is not None and label in self.met_by.get(expected, frozenset({expected}))


@dataclass(frozen=True)
class FileSpelling:
    """Where a scheme's import keeps a target's word and part-of-speech tag as its file spelled them,
    as ``Target.extra`` lookups (``"extra__<key>__<key>"``): ids computed from a file's spelling
    (the swords library's target ids, ``analysis.target_ids``) read them where present."""

    word_path: str
    pos_path: str


def scheme_file_spelling(scheme: object) -> FileSpelling | None:
    """Where ``scheme`` keeps a file's spelling of its targets (``file_spelling``), or None."""
    declared = getattr(scheme, "file_spelling", None)
    return declared if isinstance(declared, FileSpelling) else None


def scheme_qualification(scheme: object) -> QualificationGold | None:
    """What ``scheme``'s qualification test asks, or None when it offers none (the default: a scheme
    offers a test by declaring ``qualification``, see ``QualificationGold``)."""
    declared = getattr(scheme, "qualification", None)
    return declared if isinstance(declared, QualificationGold) else None


@dataclass(frozen=True)
class ReplaySource:
    """What a scheme offers the replay crowd (``review.replay``, docs/design.md §13): ``read`` gives a
    released benchmark file's labels, keyed by (the target's ``external_id``, the candidate's
    ``normalized`` text) as the scheme's import keys them, each a tuple of label values (accept /
    reject / abstain) in the file's order, and raises ``ImportFailed`` naming what is wrong;
    ``stops_early`` says whether the settings let a candidate leave its rounds before the design's
    maximum (a stopping policy), so that one whose released labels ran out may stand on them."""

    read: Callable[[str | os.PathLike[str]], Mapping[tuple[str, str], tuple[str, ...]]]
    stops_early: Callable[[SchemeSettings], bool]


def scheme_replay(scheme: object) -> ReplaySource | None:
    """What ``scheme`` offers the replay crowd, or None when it reads no released labels (the default:
    a scheme offers a replay by declaring ``replay``, see ``ReplaySource``)."""
    declared = getattr(scheme, "replay", None)
    return declared if isinstance(declared, ReplaySource) else None


# Labels a replay (``review.replay``) can still give each candidate, by id, while it collects: a
# scheme sizing a candidate's next round reads it, so no round asks for labels the release no longer
# holds (docs/design.md §13). None for a real crowd: the rules are the same, the rounds unbounded.
REPLAY_LABELS_LEFT: ContextVar[Mapping[int, int] | None] = ContextVar("replay_labels_left", default=None)


def scheme_refreshed(scheme: object, *, benchmark: Benchmark) -> None:
    """Tell ``scheme`` that a refresh of ``benchmark`` moved its change key, inside the refresh's
    transaction: a scheme keeping state between refreshes declares ``after_refresh(benchmark=...)``
    (SWORDS's count table of the adaptive stop, docs/design.md §13); the others declare nothing."""
    hook = getattr(scheme, "after_refresh", None)
    if callable(hook):
        hook(benchmark=benchmark)


@dataclass(frozen=True)
class CandidatePrompt:
    """What a scheme asks a language model for a target's candidates (docs/candidates.md), declared
    as its ``candidate_prompt``: a template whose placeholders (``annotation.llm.PLACEHOLDERS``:
    ``{context}``, ``{marked_context}``, ``{target}``, ``{pos}``, ``{count}``, ``{language}``, ...)
    are filled per target; or no template and ``refusal``, why the scheme takes no such candidates."""

    template: str | None
    refusal: str = ""

    def __post_init__(self) -> None:
        if self.template is None and not self.refusal:
            raise ValueError("a scheme that asks no model for candidates says why (refusal)")


def scheme_candidate_prompt(scheme: object) -> CandidatePrompt | None:
    """What ``scheme`` asks a language model for candidates, or None when it declares nothing."""
    declared = getattr(scheme, "candidate_prompt", None)
    return declared if isinstance(declared, CandidatePrompt) else None


# ---- the scheme -------------------------------------------------------------------------------


class AnnotationScheme(Protocol):
    """What ``hits``, ``review`` and ``analysis`` ask of a scheme (see the module docstring)."""

    name: ClassVar[str]
    title: ClassVar[str]
    settings_type: ClassVar[type[SchemeSettings]]
    steps: ClassVar[tuple[Step, ...]]
    page: ClassVar[Page]
    # Researchers' names for the scheme's item kinds (HITItem.kind), e.g. "control: the target itself".
    item_kinds: ClassVar[Mapping[str, str]]
    # The review pipeline that moves targets through the steps ("reduce-score", SWORDS §3.2), or ""
    # when targets need no moving (one step).
    pipeline: ClassVar[str]
    # Whether its work always goes to annotators a researcher names (ProLex's experts), on the local
    # queue, rather than to whoever takes it (a crowd).
    assigned: ClassVar[bool]
    # The scheme's words for the stored stages of its targets and candidates (stored value -> name
    # shown: SWORDS's "reduce" is "step 2: reduce", ProLex's "being judged"); ``stage_name`` reads them.
    target_stage_names: ClassVar[Mapping[str, str]]
    candidate_stage_names: ClassVar[Mapping[str, str]]
    # The step a follow-up batch collects for the targets a refresh moves on (SWORDS: step 3, score),
    # or None when no target moves on to a later step.
    followup_step: ClassVar[int | None]
    # Whether its answers are labels of a target's candidates (accept / reject / abstain or the
    # scheme's names for them): the generic label and candidate tables, scores and agreement fit it.
    judges_candidates: ClassVar[bool]
    # Whether a new benchmark takes this scheme when none is named (one scheme says so).
    default: ClassVar[bool]
    # A scheme that offers a qualification test also declares ``qualification`` (a ``QualificationGold``);
    # it is optional, so it is read through ``scheme_qualification`` and not named here.

    def settings(self, benchmark: Benchmark) -> SchemeSettings:
        """The benchmark's settings of this scheme, checked."""
        ...

    def assignments_per_hit(self, settings: SchemeSettings, step: int) -> int:
        """How many assignments a HIT of ``step`` collects by default."""
        ...

    def describe_batches(self, settings: SchemeSettings) -> str:
        """A sentence for the batch form: how the scheme cuts HITs and how many assignments each takes."""
        ...

    def work_for_step(
        self, *, benchmark: Benchmark, settings: SchemeSettings, step: int, target_ids: Sequence[int] | None
    ) -> StepWork:
        """What ``step`` still needs of the benchmark's targets (every target when ``target_ids`` is
        None). Labels the benchmark has, imported or collected, are never asked for again."""
        ...

    def planner(
        self, *, benchmark: Benchmark, settings: SchemeSettings, step: int, seed: int, target_ids: Sequence[int]
    ) -> TargetPlanner:
        """A function planning one target's HITs; it may prepare batch-wide state first (distractors)."""
        ...

    def clean_answers(
        self, *, items: Sequence[ItemRef], answers: Mapping[Any, Any], settings: SchemeSettings | None = None
    ) -> dict[int, CleanAnswer]:
        """Item id -> checked answer for every item (``settings``: the benchmark's, e.g. how many
        targets a sentence needs; None: the scheme's defaults), or ``AnswersInvalid`` naming what is wrong."""
        ...

    def judgments(self, *, items: Sequence[ItemRef], answers: Mapping[int, CleanAnswer]) -> Judgments:
        """The labels a clean submission adds and its control checks."""
        ...

    def control_threshold(self, settings: SchemeSettings) -> float | None:
        """The control accuracy below which a worker's work is filtered; None without controls."""
        ...

    def control_check(self, *, kind: str, value: str) -> tuple[bool, str]:
        """Whether an answer to a control of ``kind`` is right, and what the control expects (in words)."""
        ...

    def progress(
        self,
        *,
        benchmark: Benchmark,
        settings: SchemeSettings,
        work: CollectedWork,
        target_ids: Sequence[int] | None = None,
    ) -> SchemeProgress:
        """The benchmark's progress per step and per target in the scheme's words, from its labels
        (read here) and what its HITs hold (``work``, read by the review room), of the targets
        ``target_ids`` only when given (every target when None)."""
        ...

    def progress_by_target(self, settings: SchemeSettings) -> bool:
        """Whether ``progress`` under ``settings`` is a sum of its targets' shares (each
        ``TargetCount`` fills ``totals``, ``candidate_stages`` and ``table_cells``, and depends on
        its own target's rows only), so the review room may keep it per target and recompute only
        the targets a change touched (docs/design.md §7, "Incremental figures")."""
        ...

    def advancement(
        self, *, benchmark: Benchmark, settings: SchemeSettings, work: CollectedWork, target_ids: Sequence[int] | None
    ) -> StageMoves:
        """What a refresh moves among ``target_ids`` (every target when None): the pure decision, which
        the review room writes. A scheme whose targets need no moving returns an empty ``StageMoves``."""
        ...
