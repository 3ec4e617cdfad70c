"""Candidates from a language model: ask, read, store with provenance (docs/candidates.md,
docs/design.md §14).

Each target is asked in a request of its own, ``LLM_CONCURRENCY`` of them in flight at once on
threads that only talk to the endpoint; this thread reads each answer as it arrives and stores it
in a transaction of its own, under the benchmark's row lock as imports are, through the importers'
writer: a candidate the target has gains the source ``llm:<model>``, the others are created with it.
The import ``llm:<model>`` keeps the provenance (``Import.provenance``): the endpoint, the model,
each prompt with its SHA-256, the temperature, how many were asked per target, when, by whom, and
the targets asked under that prompt. A run skips those, so a run that stopped half-way (a failure,
a stopped process) is resumed by running it again; an interrupted run keeps every target it stored.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from annotation.activity import activity_record
from annotation.importers.records import CandidateRecord, TargetRecord, Where
from annotation.importers.report import ImportReport
from annotation.importers.writer import BenchmarkWriter
from annotation.llm.answers import answer_parse
from annotation.llm.client import ChatAnswer, ChatEndpoint, ChatFailed, EndpointConfig
from annotation.llm.prompts import (
    SYSTEM_MESSAGE,
    PromptRefused,
    default_prompt,
    prompt_check,
    prompt_render,
    prompt_sha256,
)
from annotation.models import ActivityKind, Benchmark, Import, Target, normalize_candidate

LLM = "llm"
#: Problems listed by name in a report; the counts stay exact.
MAX_LISTED = 50
#: Tokens the dry run assumes per substitute of an answer, and for the answer's JSON around them.
TOKENS_PER_SUBSTITUTE = 6
TOKENS_PER_ANSWER = 12


def llm_origin(model: str) -> str:
    """The source and import origin of a model's candidates."""
    return f"{LLM}:{model}"


@dataclass(frozen=True)
class ModelRequest:
    """What a run asks: ``prompt`` is a researcher's template (None: the scheme's), ``prompt_name``
    names it in errors (the file's name)."""

    model: str
    per_target: int | None = None
    temperature: float | None = None
    prompt: str | None = None
    prompt_name: str = "the prompt"
    base_url: str | None = None

    def checked(self) -> ModelRequest:
        if not self.model.strip():
            raise ValueError("name the model to ask (--model, or the LLM_MODEL setting)")
        per_target = settings.LLM_PER_TARGET if self.per_target is None else self.per_target
        if not 1 <= per_target <= 100:
            raise ValueError(f"per target must be between 1 and 100, not {per_target}")
        temperature = settings.LLM_TEMPERATURE if self.temperature is None else self.temperature
        if not 0 <= temperature <= 2:
            raise ValueError(f"the temperature must be between 0 and 2, not {temperature:g}")
        return ModelRequest(
            model=self.model.strip(),
            per_target=per_target,
            temperature=float(temperature),
            prompt=self.prompt,
            prompt_name=self.prompt_name,
            base_url=(self.base_url or settings.OPENAI_BASE_URL).rstrip("/"),
        )


@dataclass
class ModelReport:
    """What a run did (or, dry, would do), in figures and words; never the key."""

    benchmark: str
    origin: str
    model: str
    endpoint: str
    prompt_sha256: str
    per_target: int
    temperature: float
    dry_run: bool = False
    targets: int = 0
    already_asked: int = 0
    asked: int = 0
    answered: int = 0
    failed: int = 0
    candidates_created: int = 0
    candidates_existing: int = 0
    candidates_by_target: dict[str, int] = field(default_factory=dict)
    repeated: int = 0
    target_itself: int = 0
    beyond_count: int = 0
    unusable_count: int = 0
    unusable: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    stopped: str = ""
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: str | None = None
    first_prompt: str = ""
    estimated_prompt_tokens: int = 0
    estimated_completion_tokens: int = 0
    estimated_cost: str | None = None
    seconds: float = 0.0

    def note_unusable(self, text: str) -> None:
        self.unusable_count += 1
        if len(self.unusable) < MAX_LISTED:
            self.unusable.append(text)

    def note_failure(self, text: str) -> None:
        self.failed += 1
        if len(self.failures) < MAX_LISTED:
            self.failures.append(text)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        lines = [f"{self.origin} at {self.endpoint}, prompt {self.prompt_sha256[:12]}, for {self.benchmark}"]
        if self.dry_run:
            lines += [
                f"dry run: nothing asked; {self.targets - self.already_asked} of {self.targets} targets to ask "
                f"({self.already_asked} asked before under this model and prompt)",
                f"estimated tokens: {self.estimated_prompt_tokens} sent, {self.estimated_completion_tokens} received; "
                f"estimated cost: {_money(self.estimated_cost)}",
                "the first target's prompt:",
                self.first_prompt,
            ]
            return "\n".join(lines)
        lines.append(
            f"targets: {self.asked} asked, {self.answered} answered, {self.failed} failed, "
            f"{self.already_asked} asked before (skipped)"
        )
        lines.append(
            f"candidates: {self.candidates_created} new, {self.candidates_existing} the targets had already; "
            f"set aside: {self.target_itself} the target itself, {self.repeated} repeated, "
            f"{self.beyond_count} beyond {self.per_target}, {self.unusable_count} unusable"
        )
        lines.append(
            f"requests retried: {self.retries}; tokens: {self.prompt_tokens} sent, {self.completion_tokens} received; "
            f"cost: {_money(self.cost)}"
        )
        lines += [f"unusable: {text}" for text in self.unusable]
        lines += [f"failed: {text}" for text in self.failures]
        if self.stopped:
            lines.append(f"stopped: {self.stopped}")
        if self.failed or self.stopped:
            lines.append("run it again to ask the targets that failed; those answered are kept")
        return "\n".join(lines)


def _money(value: str | None) -> str:
    return "no price (LLM_PRICE_PER_1K_* are 0)" if value is None else f"${value}"


def _price(prompt_tokens: int, completion_tokens: int) -> str | None:
    per_in: Decimal = settings.LLM_PRICE_PER_1K_INPUT_TOKENS
    per_out: Decimal = settings.LLM_PRICE_PER_1K_OUTPUT_TOKENS
    if not per_in and not per_out:
        return None
    cost = per_in * prompt_tokens / 1000 + per_out * completion_tokens / 1000
    return str(cost.quantize(Decimal("0.0001")))


def estimate_tokens(text: str) -> int:
    """A rough count of a text's tokens: four characters each, as English text averages with the
    common tokenizers (other scripts take more; the estimate is for a budget, not a bill)."""
    return max(1, math.ceil(len(text) / 4))


def _label(target: Target) -> str:
    return f"target {target.pk} ({target.word!r})"


def candidates_from_model(
    *,
    benchmark: Benchmark,
    request: ModelRequest,
    targets: Sequence[Target],
    lemmatized: bool,
    created_by: User | None = None,
    dry_run: bool = False,
    progress: Callable[[int, int], None] | None = None,
    endpoint: ChatEndpoint | None = None,
) -> ModelReport:
    """Ask the model for substitutes of each of ``targets`` not yet asked under this model and
    prompt, and store what it answers (see the module docstring). ``ValueError`` for a request that
    cannot run (no model, a prompt that is not usable, a scheme that asks no model)."""
    request = request.checked()
    assert request.per_target is not None and request.temperature is not None and request.base_url is not None
    template = prompt_check(request.prompt, where=request.prompt_name) if request.prompt else default_prompt(benchmark)
    sha = prompt_sha256(template)
    origin = llm_origin(request.model)
    report = ModelReport(
        benchmark=benchmark.name,
        origin=origin,
        model=request.model,
        endpoint=request.base_url,
        prompt_sha256=sha,
        per_target=request.per_target,
        temperature=request.temperature,
        dry_run=dry_run,
        targets=len(targets),
    )
    started = time.perf_counter()
    existing = Import.objects.filter(benchmark=benchmark, origin=origin).first()
    asked_before = set(_asked(existing, sha))
    waiting = [target for target in targets if target.pk not in asked_before]
    report.already_asked = len(targets) - len(waiting)
    prompts = {
        target.pk: prompt_render(
            template, target=target, benchmark=benchmark, count=request.per_target, lemmatized=lemmatized
        )
        for target in waiting
    }
    if dry_run:
        report.first_prompt = prompts[waiting[0].pk] if waiting else ""
        report.estimated_prompt_tokens = sum(
            estimate_tokens(SYSTEM_MESSAGE) + estimate_tokens(text) for text in prompts.values()
        )
        report.estimated_completion_tokens = len(waiting) * (
            TOKENS_PER_ANSWER + TOKENS_PER_SUBSTITUTE * request.per_target
        )
        report.estimated_cost = _price(report.estimated_prompt_tokens, report.estimated_completion_tokens)
        report.seconds = time.perf_counter() - started
        return report

    endpoint = endpoint or ChatEndpoint(EndpointConfig.from_settings(request.base_url))
    import_report = ImportReport(benchmark=benchmark.name, origin=origin, format=LLM)
    by = created_by.get_username() if created_by is not None else ""
    done = 0
    if progress is not None:
        progress(0, len(waiting))
    # Workers only talk to the endpoint; a fatal answer (a wrong key, model or URL) stops the rest.
    stopping: list[str] = []
    stop = threading.Event()

    def ask(target: Target) -> ChatAnswer | None:
        if stop.is_set():
            return None
        messages = [{"role": "system", "content": SYSTEM_MESSAGE}, {"role": "user", "content": prompts[target.pk]}]
        try:
            return endpoint.complete(model=request.model, messages=messages, temperature=request.temperature or 0.0)
        except ChatFailed as exc:
            if exc.fatal:
                stop.set()
            raise

    pool = ThreadPoolExecutor(max_workers=settings.LLM_CONCURRENCY, thread_name_prefix="llm")
    try:
        futures: dict[Future[ChatAnswer | None], Target] = {pool.submit(ask, target): target for target in waiting}
        for future in as_completed(futures):
            target = futures[future]
            try:
                answer = future.result()
            except ChatFailed as exc:
                report.asked += 1
                report.note_failure(f"{_label(target)}: {exc}")
                if exc.fatal and not stopping:
                    stopping.append(str(exc))
                continue
            if answer is None:
                continue  # not asked: the run stopped first
            report.asked += 1
            report.answered += 1
            report.prompt_tokens += answer.prompt_tokens or 0
            report.completion_tokens += answer.completion_tokens or 0
            _store(
                benchmark=benchmark,
                target=target,
                answer=answer,
                request=request,
                template=template,
                sha=sha,
                by=by,
                created_by=created_by,
                report=report,
                import_report=import_report,
            )
            done += 1
            if progress is not None:
                progress(done, len(waiting))
    finally:
        # An interrupted run (an error while storing, a stopped command) asks nothing more: the
        # targets not yet asked are cancelled, and those in flight are left to finish unread.
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)

    report.retries = endpoint.retries
    report.stopped = stopping[0] if stopping else ""
    report.candidates_created = import_report.candidates.created
    report.candidates_existing = import_report.candidates.merged + import_report.candidates.skipped
    report.cost = _price(report.prompt_tokens, report.completion_tokens)
    if report.asked:
        activity_record(
            benchmark=benchmark,
            kind=ActivityKind.IMPORTED,
            summary=(
                f"added candidates from {origin}: {report.candidates_created} new for {report.answered} targets"
                + (f", {report.failed} failed" if report.failed else "")
            ),
            by=created_by,
            result={
                "origin": origin,
                "format": LLM,
                "candidates": report.candidates_created,
                "targets": report.answered,
                "failed": report.failed,
                "prompt_sha256": sha,
            },
        )
    report.seconds = time.perf_counter() - started
    return report


def model_form_defaults(benchmark: Benchmark) -> dict[str, Any]:
    """What the benchmark page's form for a model's candidates starts from: the settings' model,
    count and temperature, the endpoint (never the key), and the scheme's prompt, or why it has none."""
    try:
        prompt, refusal = default_prompt(benchmark), ""
    except PromptRefused as exc:
        prompt, refusal = "", str(exc)
    return {
        "model": settings.LLM_MODEL,
        "per_target": settings.LLM_PER_TARGET,
        "temperature": settings.LLM_TEMPERATURE,
        "endpoint": settings.OPENAI_BASE_URL,
        "prompt": prompt,
        "refusal": refusal,
    }


def _asked(record: Import | None, sha: str) -> list[int]:
    if record is None:
        return []
    entry = record.provenance.get("prompts", {}).get(sha, {}) if isinstance(record.provenance, dict) else {}
    found = entry.get("targets", []) if isinstance(entry, dict) else []
    return [pk for pk in found if isinstance(pk, int)]


def _store(
    *,
    benchmark: Benchmark,
    target: Target,
    answer: ChatAnswer,
    request: ModelRequest,
    template: str,
    sha: str,
    by: str,
    created_by: User | None,
    report: ModelReport,
    import_report: ImportReport,
) -> None:
    """One target's answer, in a transaction of its own under the benchmark's row lock: its
    candidates, and the target recorded as asked under the prompt (so a re-run skips it)."""
    assert request.per_target is not None
    parsed = answer_parse(answer.text, target=target.word, count=request.per_target)
    report.repeated += parsed.repeated
    report.target_itself += parsed.target_itself
    report.beyond_count += parsed.beyond_count
    for problem in parsed.unusable:
        report.note_unusable(f"{_label(target)}: {problem}")
    if not parsed.substitutes:
        shown = answer.text.strip().replace("\n", " ")[:120]
        report.note_unusable(f"{_label(target)}: the answer held no usable substitute: {shown!r}")
    origin = llm_origin(request.model)
    where = Where(file=origin, item=f"target {target.pk}")
    record = TargetRecord(
        where=where,
        context_text=target.context.text,
        word=target.word,
        offset=target.offset,
        pos=target.pos,
        lemma=target.lemma,
        candidates=[
            CandidateRecord(
                text=text,
                normalized=normalize_candidate(text),
                sources=[origin],
                labels=[],
                where=where,
                extra={LLM: {"model": request.model, "prompt_sha256": sha, "rank": rank, "raw": raw}},
            )
            for rank, (text, raw) in enumerate(parsed.substitutes, start=1)
        ],
    )
    now = timezone.now().isoformat()
    with transaction.atomic():
        locked = Benchmark.objects.select_for_update(no_key=True).get(pk=benchmark.pk)
        import_record, _ = Import.objects.get_or_create(
            benchmark=locked, origin=origin, defaults={"created_by": created_by}
        )
        import_record = Import.objects.select_for_update().get(pk=import_record.pk)
        provenance: dict[str, Any] = dict(import_record.provenance or {})
        prompts: dict[str, Any] = dict(provenance.get("prompts", {}))
        entry: dict[str, Any] = dict(prompts.get(sha, {}))
        entry.update(
            {
                "prompt": template,
                "system": SYSTEM_MESSAGE,
                "endpoint": request.base_url,
                "temperature": request.temperature,
                "per_target": request.per_target,
                "first_at": entry.get("first_at", now),
                "last_at": now,
                "by": by or entry.get("by", ""),
                "targets": [*entry.get("targets", []), target.pk],
            }
        )
        prompts[sha] = entry
        provenance.update({"source": LLM, "endpoint": request.base_url, "model": request.model, "prompts": prompts})
        import_record.provenance = provenance
        import_record.save(update_fields=["provenance"])
        writer = BenchmarkWriter(benchmark=locked, import_record=import_record, report=import_report)
        created_before = import_report.candidates.created
        writer.add_all([record])
        report.candidates_by_target[str(target.pk)] = import_report.candidates.created - created_before
