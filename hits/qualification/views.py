"""Pages of the qualification test: the annotator takes it (the HIT page's look, the scheme's rows and
keys), and the researcher sees the test, its pass rate and each person's result."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from annotation.access import Role, benchmark_for, object_for
from annotation.importers.errors import ImportFailed
from annotation.models import Benchmark
from annotation.services import worker_for_user
from crowdlex.middleware import never_cached
from crowdlex.permissions import researcher_required
from crowdlex.throttling import SubmitThrottle, throttled
from hits.qualification import selectors
from hits.qualification.forms import FROM_FILE, QualificationBuildForm
from hits.qualification.gold import ClearScores, GoldItem, gold_items_from_benchmark, gold_items_read
from hits.qualification.models import QualificationAttempt, QualificationTest
from hits.qualification.services import (
    QualificationRefused,
    gold_scheme,
    no_test_message,
    offered_gold_scheme,
    qualification_attempt_reset,
    qualification_attempt_start,
    qualification_attempt_submit,
    qualification_build,
    qualification_set_active,
)
from hits.views.annotator import annotator_required, posted_answers
from schemes.base import AnswersInvalid, QualificationGold

# Gold items shown on one page of the test's researcher page.
ITEMS_PER_PAGE = 100


class NotOffered(Exception):
    """The benchmark's scheme offers no qualification test: its pages answer 404 saying so."""

    def __init__(self, benchmark: Benchmark) -> None:
        super().__init__(no_test_message(benchmark))
        self.benchmark = benchmark


def _offered(benchmark: Benchmark) -> Benchmark:
    if offered_gold_scheme(benchmark) is None:
        raise NotOffered(benchmark)
    return benchmark


def _test_of(benchmark: Benchmark) -> QualificationTest:
    test = QualificationTest.objects.select_related("benchmark").filter(benchmark=_offered(benchmark)).first()
    if test is None:
        raise Http404("This benchmark has no qualification test.")
    return test


def _researchers_test(request: HttpRequest, name: str, need: Role) -> QualificationTest:
    """The benchmark's test for a researcher with the role ``need`` in it (404 / 403 otherwise)."""
    try:
        return _test_of(benchmark_for(request.user, name, need))
    except NotOffered as error:
        raise Http404(str(error)) from error


def _not_offered(request: HttpRequest, error: NotOffered, *, researcher: bool) -> HttpResponse:
    context = {"benchmark": error.benchmark, "message": str(error), "researcher": researcher}
    return render(request, "hits/qualification/not_offered.html", context, status=404)


def _render_attempt(
    request: HttpRequest,
    attempt: QualificationAttempt,
    *,
    selected: dict[int, str] | None = None,
    missing: set[int] | None = None,
    error: str = "",
    status: int = 200,
) -> HttpResponse:
    test = attempt.test
    scheme = gold_scheme(test.benchmark).scheme
    question_before, question_after = scheme.page.question_around_target()
    groups = selectors.attempt_page(attempt=attempt, selected=selected, missing=missing)
    context = {
        "test": test,
        "benchmark": test.benchmark,
        "attempt": attempt,
        "groups": groups,
        "rows_total": sum(len(group.rows) for group in groups),
        "scheme": scheme.page,
        "question_before": question_before,
        "question_after": question_after,
        "editable": attempt.submitted_at is None,
        "error": error,
    }
    return render(request, "hits/qualification/take.html", context, status=status)


@never_cached
@annotator_required
@require_http_methods(["GET", "POST"])
@throttled(SubmitThrottle)
def qualification_take(request: HttpRequest, name: str) -> HttpResponse:
    """GET shows the test (starting the one attempt); POST grades it and shows the result; 404 saying
    so where the benchmark's scheme offers no test, and as for a missing benchmark where the taker may
    not see it."""
    benchmark = selectors.benchmark_to_take(user=request.user, name=name)
    if benchmark is None:
        raise Http404("No such benchmark.")
    try:
        test = _test_of(benchmark)
    except NotOffered as error:
        return _not_offered(request, error, researcher=False)
    worker = worker_for_user(user=request.user)  # type: ignore[arg-type]
    existing = QualificationAttempt.objects.filter(test=test, worker=worker).first()
    if existing is None and not test.active:
        raise Http404("This qualification test is closed.")
    try:
        attempt = existing or qualification_attempt_start(test=test, worker=worker)
    except QualificationRefused as error:
        raise Http404(str(error.message)) from error
    if attempt.submitted_at is not None:
        return render(request, "hits/qualification/result.html", {"test": test, "attempt": attempt})
    if request.method == "GET":
        return _render_attempt(request, attempt)
    answers = posted_answers(request.POST)
    try:
        qualification_attempt_submit(attempt=attempt, answers=answers)
    except AnswersInvalid as error:
        return _render_attempt(
            request, attempt, selected=answers, missing=set(error.missing), error=str(error.message), status=400
        )
    # The result is the same page's GET: a reload never posts the answers again.
    return redirect("qualification-take", name=test.benchmark.name)


@researcher_required
def qualification_detail(request: HttpRequest, name: str) -> HttpResponse:
    """The researcher's page: the test's settings and items, its pass rate, each person's result; 404
    saying so where the benchmark's scheme offers no test."""
    benchmark = benchmark_for(request.user, name, Role.VIEWER)
    try:
        _offered(benchmark)
    except NotOffered as error:
        return _not_offered(request, error, researcher=True)
    return _render_detail(request, benchmark)


def _render_detail(
    request: HttpRequest, benchmark: Benchmark, *, form: QualificationBuildForm | None = None, status: int = 200
) -> HttpResponse:
    test = QualificationTest.objects.filter(benchmark=benchmark).first()
    form = form or QualificationBuildForm(initial={"from_benchmark": benchmark.name})
    context: dict[str, object] = {
        "benchmark": benchmark,
        "test": test,
        "build_form": form,
        "qualified_crowds": selectors.crowds_held_to_test(),
    }
    if test is not None:
        # A test built from a whole benchmark may hold thousands of gold items: one page at a time.
        items = Paginator(test.items.order_by("position"), ITEMS_PER_PAGE).get_page(request.GET.get("page"))
        context.update(
            {
                "summary": selectors.test_summary(test),
                "attempts": list(selectors.test_attempts(test)[:500]),
                "items": selectors.item_figures(test, items),
                "items_page": items,
            }
        )
    return render(request, "hits/qualification/detail.html", context, status=status)


def _gold_from_form(
    request: HttpRequest, form: QualificationBuildForm, gold: QualificationGold
) -> tuple[list[GoldItem], str]:
    data = form.cleaned_data
    if data["source"] == FROM_FILE:
        upload = data["gold_file"]
        # One byte past the limit is enough for the reader to refuse a file that is too large.
        data_read = upload.read(settings.QUALIFICATION_MAX_GOLD_FILE_BYTES + 1)
        return gold_items_read(data_read, file=upload.name, gold=gold), f"file {upload.name}"
    try:
        other = benchmark_for(request.user, data["from_benchmark"], Role.VIEWER)
    except (Http404, PermissionDenied):
        raise QualificationRefused(
            f"No benchmark named {data['from_benchmark']!r} that you may see.", code="benchmark"
        ) from None
    try:
        clear = ClearScores(data["min_labels"], data["accept_min"], data["reject_max"])
    except ValueError as error:
        raise QualificationRefused(f"Clear scores: {error}.", code="clear_scores") from None
    items = gold_items_from_benchmark(benchmark=other, clear=clear, seed=data["seed"])
    return items, (
        f"benchmark {other.name} (>= {clear.min_labels} labels, score >= {clear.accept_min} or <= {clear.reject_max})"
    )


@researcher_required
@require_POST
def qualification_build_page(request: HttpRequest, name: str) -> HttpResponse:
    """Build (or rebuild, while nobody has taken it) the test from the form on the researcher's page;
    what is wrong with the form, the file or the gold items is shown on the form."""
    benchmark = benchmark_for(request.user, name, Role.EDITOR)
    try:
        gold = gold_scheme(_offered(benchmark)).gold
    except NotOffered as error:
        return _not_offered(request, error, researcher=True)
    form = QualificationBuildForm(request.POST, request.FILES)
    if not form.is_valid():
        return _render_detail(request, benchmark, form=form, status=400)
    try:
        items, source = _gold_from_form(request, form, gold)
        test = qualification_build(
            benchmark=benchmark,
            items=items,
            length=form.cleaned_data["length"],
            pass_mark=form.cleaned_data["pass_mark"],
            seed=form.cleaned_data["seed"],
            source=source,
            created_by=request.user if isinstance(request.user, User) else None,
        )
    except ImportFailed as error:
        form.add_error("gold_file", error.describe())
    except QualificationRefused as error:
        form.add_error(None, str(error.message))
    else:
        messages.success(
            request, f"The test is built: {test.length} of its {test.items.count()} gold items in each attempt."
        )
        return redirect("qualification-detail", name=benchmark.name)
    return _render_detail(request, benchmark, form=form, status=400)


@researcher_required
@require_POST
def qualification_active(request: HttpRequest, name: str) -> HttpResponse:
    test = _researchers_test(request, name, Role.EDITOR)
    active = request.POST.get("active") == "1"
    qualification_set_active(test=test, active=active)
    messages.success(
        request,
        "The test now gates the benchmark's HITs." if active else "The test is off: the HITs are open to everyone.",
    )
    return redirect("qualification-detail", name=name)


@researcher_required
@require_POST
def qualification_reset(request: HttpRequest, name: str, attempt_id: int) -> HttpResponse:
    test = _researchers_test(request, name, Role.EDITOR)
    attempt = object_for(request.user, QualificationAttempt.objects.filter(test=test), Role.EDITOR, pk=attempt_id)
    qualification_attempt_reset(attempt=attempt)
    messages.success(request, f"{attempt.worker.external_id} may take the test again.")
    return redirect("qualification-detail", name=name)
