"""The figures warmed after a change (annotation.warm, docs/design.md §7, "Figures warmed after a
change"): after a change that names every target, the task leaves the researcher's pages reading
their figures from the cache, equal to a fresh computation; a change committed while it runs is
never hidden; it is queued once per change and not at all with BENCHMARK_FIGURES_WARM off."""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import cache
from django.db import connection, transaction
from django.test import Client

import annotation.changes as changes
import annotation.warm as warm
from analysis import services
from analysis.adjudication.selectors import disagreement_queue
from analysis.services.splits import benchmark_split_seeded
from analysis.statistics_page import STATISTICS_PAGE
from annotation.changes import benchmark_changed, figures_key
from annotation.models import Benchmark
from annotation.selectors import benchmark_counts
from annotation.services import benchmark_import
from annotation.warm import benchmark_figures_warm, figures_warmers, register_figures_warmer
from crowdlex.celery import app
from review.views import live_body
from tests.base import Cast, make_user
from tests.celery_worker import running_worker, tasks_sent_to
from tests.review.builders import honest, make_benchmark, simulated, step2_batch, work_once
from tests.routes import benchmark_ids, researcher_urls

pytestmark = pytest.mark.django_db

# The pages whose figures the warm brings up to date (docs/design.md §7): none of them computes a
# figure in the first request after the warm.
WARMED_PAGES = {
    "benchmark-detail",
    "benchmark-live",
    "benchmark-live?part=batches",
    "pipeline-progress",
    "analysis-statistics",
    "analysis-evaluation",
    "adjudication-queue",
}


@pytest.fixture(autouse=True)
def _warm_on(settings: Any) -> None:
    """The warm on (the suite runs with it off), and one period of the figures for the whole test:
    the clock ageing figures (``annotation.changes.figures_key``) is not what is tested."""
    settings.BENCHMARK_FIGURES_WARM = True
    settings.BENCHMARK_FIGURES_MAX_AGE_SECONDS = 10**9


class Computed:
    """Records the figures computed rather than read from the cache: a ``benchmark_cached`` entry
    missed (its computing mark taken) and figures kept per target written."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.names: list[str] = []
        real_add, real_write = changes.cache.add, changes._write

        def add(key: str, *args: Any, **kwargs: Any) -> bool:
            if key.endswith(":computing"):
                self.names.append(":".join(key.split(":")[3:-1]))
            return bool(real_add(key, *args, **kwargs))

        def write(prefix: str, *args: Any, **kwargs: Any) -> None:
            self.names.append(f"kept {prefix.split(':')[-1]}")
            real_write(prefix, *args, **kwargs)

        monkeypatch.setattr(changes.cache, "add", add)
        monkeypatch.setattr(changes, "_write", write)


def _benchmark(cast: Cast) -> Benchmark:
    benchmark = make_benchmark(targets=4, candidates=6, created_by=cast.researcher)
    step2_batch(benchmark)
    for name in ("ann", "ben", "cat"):
        work_once(simulated(name), benchmark, honest({"perched": "accept"}))
    return benchmark


def _import_more(benchmark: Benchmark, tmp_path: Path, number: int) -> None:
    """An import into the benchmark: a change that names every target."""
    path = tmp_path / f"more-{number}.jsonl"
    context = f"A dog number {number} ran along the beach."
    record = {"context": context, "target": "ran", "offset": context.index(" ran ") + 1, "pos": "verb"}
    candidates = {"text": "sprinted", "sources": ["coinco"], "labels": ["accept", "reject", "abstain"]}
    path.write_text(json.dumps({**record, "candidates": [candidates, "dashed", "raced"]}) + "\n")
    benchmark_import(path_or_file=str(path), benchmark_name=benchmark.name)


def _pages(benchmark: Benchmark) -> dict[str, str]:
    urls = researcher_urls(benchmark_ids(benchmark))
    return {name: urls[name] for name in WARMED_PAGES}


def _computed_by_pages(client: Client, benchmark: Benchmark, monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """The figures each warmed page computes in its first request."""
    computed: dict[str, list[str]] = {}
    for name, url in sorted(_pages(benchmark).items()):
        with monkeypatch.context() as patch:
            record = Computed(patch)
            response = client.get(url)
        assert response.status_code == 200, url
        if record.names:
            computed[name] = record.names
    return computed


@pytest.mark.parametrize("change", ["import", "setting"])
def test_after_a_change_naming_every_target_the_warm_leaves_every_page_reading_its_figures(
    cast: Cast, client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    benchmark = _benchmark(cast)
    client.force_login(cast.researcher)

    def changed(number: int) -> None:
        if change == "import":
            _import_more(benchmark, tmp_path, number)
        else:
            benchmark_changed(benchmark_id=benchmark.pk)

    # Without the warm, the first reader after the change computes the figures.
    changed(1)
    assert set(_computed_by_pages(client, benchmark, monkeypatch)) == WARMED_PAGES
    changed(2)
    result = benchmark_figures_warm(benchmark=benchmark)
    assert result.failed == []
    assert _computed_by_pages(client, benchmark, monkeypatch) == {}


def test_the_warmed_figures_equal_a_fresh_computation(cast: Cast, tmp_path: Path) -> None:
    benchmark = _benchmark(cast)
    _import_more(benchmark, tmp_path, 1)
    benchmark_figures_warm(benchmark=benchmark)

    def figures() -> dict[str, Any]:
        return {
            "counts": benchmark_counts(benchmark=benchmark),
            "live": live_body(benchmark=benchmark, parts=[]),
            "live batches": live_body(benchmark=benchmark, parts=["batches"]),
            "statistics": services.benchmark_statistics_kept(benchmark=benchmark),
            "leaderboard": services.benchmark_leaderboard(benchmark=benchmark),
            "queue": disagreement_queue(benchmark=benchmark),
        }

    warmed = figures()
    cache.clear()
    assert warmed == figures()


def test_a_change_committed_while_the_warm_runs_is_never_hidden(
    cast: Cast, client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    benchmark = _benchmark(cast)
    client.force_login(cast.researcher)
    benchmark_figures_warm(benchmark=benchmark)
    before = benchmark_counts(benchmark=benchmark)
    # A change that commits after the warm read the counts, before it reaches the other figures.
    monkeypatch.setattr(warm, "_WARMERS", dict(warm._WARMERS))
    warmers = list(warm._WARMERS.items())
    warm._WARMERS.clear()

    def import_meanwhile(_: Benchmark) -> None:
        # Committed here, during the warm: its commit's callbacks run now.
        with django_capture_on_commit_callbacks(execute=True):
            _import_more(benchmark, tmp_path, 1)

    for name, each in warmers:
        warm._WARMERS[name] = each
        if name == "counts":
            register_figures_warmer("an import meanwhile", import_meanwhile)
    with monkeypatch.context() as patch:
        sent: list[tuple[Any, ...]] = []
        patch.setattr(app.tasks[warm.WARM_TASK], "delay", lambda *args: sent.append(args))
        # The change that queues the warm, then the warm as its task runs it.
        with django_capture_on_commit_callbacks(execute=True):
            benchmark_changed(benchmark_id=benchmark.pk)
        assert sent == [(benchmark.pk, True)]
        benchmark_figures_warm(benchmark=benchmark)
    # (The import's refresh queues the warm after a refresh besides.)
    assert sent.count((benchmark.pk, True)) == 2, "the change committed during the warm queued it again"
    after = benchmark_counts(benchmark=benchmark)
    assert after["targets"] == before["targets"] + 1
    cache.clear()
    assert after == benchmark_counts(benchmark=benchmark)
    page = client.get(f"/benchmarks/{benchmark.name}/live/")
    assert json.loads(page.content)["figures"]["counts.targets"] == str(after["targets"])


def test_a_warm_that_outlasts_the_figures_period_warms_them_once_more(
    cast: Cast, monkeypatch: pytest.MonkeyPatch
) -> None:
    benchmark = _benchmark(cast)
    periods = iter([1, 2, 2])
    monkeypatch.setattr(warm, "figures_period", lambda: next(periods))
    ran: list[str] = []
    monkeypatch.setattr(warm, "_WARMERS", {})
    register_figures_warmer("counts", lambda benchmark: ran.append("counts"))
    benchmark_figures_warm(benchmark=benchmark)
    assert ran == ["counts", "counts"]


def _without_token(html: str) -> str:
    """The page without its CSRF token: the reader's own, rendered outside the fragments."""
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", html)


def test_the_pipeline_pages_first_fragments_are_rendered_before_the_first_reader_of_each_role(
    cast: Cast, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    import annotation.fragments as fragments
    from annotation.access import Role, access_grant

    benchmark = _benchmark(cast)
    viewer = make_user("vera", researcher=True)
    access_grant(benchmark=benchmark, user=cast.researcher, role=Role.OWNER, by=None)
    access_grant(benchmark=benchmark, user=viewer, role=Role.VIEWER, by=cast.researcher)
    url = researcher_urls(benchmark_ids(benchmark))["pipeline-progress"]
    benchmark_changed(benchmark_id=benchmark.pk)
    assert benchmark_figures_warm(benchmark=benchmark).failed == []
    rendered: list[str] = []
    real = fragments.fragment_cached

    def cached(*, key: str, render: Any) -> str:
        def rendering() -> str:
            rendered.append(key)
            return str(render())

        return str(real(key=key, render=rendering))

    pages: dict[str, str] = {}
    with monkeypatch.context() as patch:
        patch.setattr(fragments, "fragment_cached", cached)
        import annotation.templatetags.fragments as tag

        patch.setattr(tag, "fragment_cached", cached)
        for user in (cast.researcher, viewer):
            client.force_login(user)
            response = client.get(url)
            assert response.status_code == 200
            pages[user.username] = _without_token(response.content.decode())
        assert rendered == [], "a first reader rendered the pipeline page's fragments"
    # What the readers got is the page rendered afresh, for each of them.
    cache.clear()
    for user in (cast.researcher, viewer):
        client.force_login(user)
        assert pages[user.username] == _without_token(client.get(url).content.decode())
    # A later page of targets is the reader's to render (its query is part of the key).
    client.force_login(viewer)
    with monkeypatch.context() as patch:
        patch.setattr(tag, "fragment_cached", cached)
        cache.clear()
        benchmark_figures_warm(benchmark=benchmark)
        client.get(url + "?page=2")
    assert rendered


def test_the_warm_is_queued_once_per_change(
    cast: Cast, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    benchmark = _benchmark(cast)
    sent: list[tuple[Any, ...]] = []
    monkeypatch.setattr(app.tasks[warm.WARM_TASK], "delay", lambda *args: sent.append(args))
    with django_capture_on_commit_callbacks(execute=True):
        with transaction.atomic():
            benchmark_changed(benchmark_id=benchmark.pk)
            benchmark_changed(benchmark_id=benchmark.pk)
        # Targets named: a change the next refresh's warm covers.
        benchmark_changed(benchmark_id=benchmark.pk, target_ids=[1])
    assert sent == [(benchmark.pk, True)]
    # A change while that one is queued, not started, is left to it.
    with django_capture_on_commit_callbacks(execute=True):
        benchmark_changed(benchmark_id=benchmark.pk)
    assert sent == [(benchmark.pk, True)]
    # Once it has started, a change queues it once more.
    benchmark_figures_warm(benchmark=benchmark)
    with django_capture_on_commit_callbacks(execute=True):
        benchmark_changed(benchmark_id=benchmark.pk)
        benchmark_changed(benchmark_id=benchmark.pk)
    assert sent == [(benchmark.pk, True)] * 2
    # A change rolled back queues nothing.
    cache.clear()
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RuntimeError), transaction.atomic():
        benchmark_changed(benchmark_id=benchmark.pk)
        raise RuntimeError("rolled back")
    assert sent == [(benchmark.pk, True)] * 2


def test_a_refresh_queues_the_warm_of_the_figures_kept_per_target(
    cast: Cast, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    from review.tasks import benchmark_refresh

    benchmark = _benchmark(cast)
    sent: list[tuple[Any, ...]] = []
    monkeypatch.setattr(app.tasks[warm.WARM_TASK], "delay", lambda *args: sent.append(args))
    with django_capture_on_commit_callbacks(execute=True):
        benchmark_refresh(benchmark.pk, touched_only=True)
    # Its advancement added HITs (an activity entry: a change naming every target), so the warm of
    # every figure is queued, and the refresh's own is left to it.
    assert sent == [(benchmark.pk, True)]
    with django_capture_on_commit_callbacks(execute=True):
        benchmark_refresh(benchmark.pk, touched_only=True)
    assert sent == [(benchmark.pk, True)], "queued twice before it started"
    benchmark_figures_warm(benchmark=benchmark)
    cache.delete(warm._queued_key(benchmark.pk, True))
    with django_capture_on_commit_callbacks(execute=True):
        benchmark_refresh(benchmark.pk, touched_only=True)
    assert sent[1:] == [(benchmark.pk, False)]
    after_refresh = {warmer.name for warmer in figures_warmers(every_target=False)}
    assert {"counts", "pipeline", "live", "statistics-rows", "evaluation"} <= after_refresh
    assert "statistics-background" not in after_refresh, "agreement is queued by its page, not by each refresh"
    assert set(benchmark_figures_warm(benchmark=benchmark, every_target=False).seconds) == after_refresh


def test_an_import_and_its_refresh_queue_one_warm_of_every_figure_after_the_refresh(
    cast: Cast, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    from crowdlex.followup import REFRESH_TASK
    from review.tasks import benchmark_refresh

    benchmark = _benchmark(cast)
    happened: list[Any] = []
    monkeypatch.setattr(app.tasks[REFRESH_TASK], "delay", lambda *args: happened.append(("refresh", *args)))
    monkeypatch.setattr(app.tasks[warm.WARM_TASK], "delay", lambda *args: happened.append(args))
    # The import commits and queues its refresh; a worker runs the refresh later, which commits.
    with django_capture_on_commit_callbacks(execute=True):
        _import_more(benchmark, tmp_path, 1)
    assert happened == [("refresh", benchmark.pk)], "a warm of a key the refresh moves was queued"
    with django_capture_on_commit_callbacks(execute=True):
        benchmark_refresh(benchmark.pk)
    assert happened == [("refresh", benchmark.pk), (benchmark.pk, True)]


def test_a_warm_started_while_a_whole_refresh_is_queued_is_left_to_the_refresh(
    cast: Cast, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    from annotation.tasks import benchmark_figures_warm as warm_task
    from crowdlex.followup import REFRESH_TASK, benchmark_refresh_queue
    from review.tasks import benchmark_refresh

    benchmark = _benchmark(cast)
    sent: list[tuple[Any, ...]] = []
    refreshes: list[tuple[Any, ...]] = []
    ran: list[str] = []
    monkeypatch.setattr(app.tasks[warm.WARM_TASK], "delay", lambda *args: sent.append(args))
    monkeypatch.setattr(app.tasks[REFRESH_TASK], "delay", lambda *args: refreshes.append(args))
    monkeypatch.setattr(warm, "_WARMERS", {})
    register_figures_warmer("counts", lambda benchmark: ran.append("counts"))
    # A change that queues its warm before the whole refresh it asks for (a crowd's sync does).
    with django_capture_on_commit_callbacks(execute=True):
        benchmark_changed(benchmark_id=benchmark.pk)
        benchmark_refresh_queue([benchmark.pk])
    assert sent == [(benchmark.pk, True)] and refreshes == [(benchmark.pk,)]
    warm_task(benchmark.pk, True)
    assert ran == [], "the figures of a key the queued refresh moves were computed"
    with django_capture_on_commit_callbacks(execute=True):
        benchmark_refresh(benchmark.pk)
    assert sent == [(benchmark.pk, True)] * 2, "the whole refresh queues the warm it was left"
    warm_task(benchmark.pk, True)
    assert ran == ["counts"]
    # A refresh of touched work leaves no mark: the warm after it runs.
    with django_capture_on_commit_callbacks(execute=True):
        benchmark_refresh(benchmark.pk, touched_only=True)
    assert sent[-1] == (benchmark.pk, False)
    warm_task(benchmark.pk, False)
    assert ran == ["counts"] * 2


def test_a_whole_refresh_rolled_back_queues_the_warm_of_the_change_before_it(
    cast: Cast, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    import review.services as review_services
    from crowdlex.followup import REFRESH_TASK, benchmark_refresh_queue
    from review.tasks import benchmark_refresh

    benchmark = _benchmark(cast)
    sent: list[tuple[Any, ...]] = []
    monkeypatch.setattr(app.tasks[warm.WARM_TASK], "delay", lambda *args: sent.append(args))
    monkeypatch.setattr(app.tasks[REFRESH_TASK], "delay", lambda *args: None)
    with django_capture_on_commit_callbacks(execute=True):
        benchmark_refresh_queue([benchmark.pk])
        benchmark_changed(benchmark_id=benchmark.pk)
    assert sent == []

    def broken(**_: Any) -> None:
        raise RuntimeError("the refresh failed")

    monkeypatch.setattr(review_services, "benchmark_refresh", broken)
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RuntimeError):
        benchmark_refresh.run(benchmark.pk)
    assert sent == [(benchmark.pk, True)]


def test_turning_the_setting_off_queues_nothing(
    cast: Cast, settings: Any, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    from review.tasks import benchmark_refresh

    settings.BENCHMARK_FIGURES_WARM = False
    benchmark = _benchmark(cast)
    sent: list[tuple[Any, ...]] = []
    monkeypatch.setattr(app.tasks[warm.WARM_TASK], "delay", lambda *args: sent.append(args))
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        benchmark_changed(benchmark_id=benchmark.pk)
        benchmark_refresh(benchmark.pk, touched_only=True)
    assert sent == []
    assert not any(getattr(callback, "__qualname__", "").startswith("figures_warm_queue") for callback in callbacks)


def test_a_warm_after_a_refresh_leaves_its_work_to_the_warm_of_the_next_refresh_queued(
    cast: Cast, settings: Any, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    from django.utils import timezone

    from annotation.models import RefreshQueued
    from annotation.tasks import benchmark_figures_warm as warm_task
    from crowdlex.followup import REFRESH_TASK
    from review.tasks import benchmark_refresh

    settings.BENCHMARK_FIGURES_WARM_DEFER_SECONDS = 60
    benchmark = _benchmark(cast)
    ran: list[str] = []
    sent: list[tuple[Any, ...]] = []
    monkeypatch.setattr(warm, "_WARMERS", {})
    monkeypatch.setattr(app.tasks[warm.WARM_TASK], "delay", lambda *args: sent.append(args))
    monkeypatch.setattr(app.tasks[REFRESH_TASK], "delay", lambda *args, **kwargs: None)
    register_figures_warmer("counts", lambda benchmark: ran.append("counts"))
    warm_task(benchmark.pk, False)
    assert ran == ["counts"]
    # A submit since queued the next refresh: this warm's key is moved already, and that refresh's
    # warm reads the newer one.
    RefreshQueued.objects.update_or_create(benchmark=benchmark, defaults={"queued_at": timezone.now()})
    warm_task(benchmark.pk, False)
    assert ran == ["counts"], "a warm ran whose work the next refresh's warm does"
    # A warm of every figure is not left to a warm after a refresh, which runs fewer warmers.
    warm_task(benchmark.pk, True)
    assert ran == ["counts"] * 2
    # The queued refresh runs, and the warm it queues at its commit runs.
    with django_capture_on_commit_callbacks(execute=True):
        benchmark_refresh(benchmark.pk, touched_only=True)
    assert not RefreshQueued.objects.filter(benchmark=benchmark).exists()
    # (Its advancement added HITs, an activity entry: the warm queued is of every figure.)
    assert sent[-1][0] == benchmark.pk
    warm_task(*sent[-1])
    assert ran == ["counts"] * 3
    # With no refresh queued, a warm after a refresh runs however recently another ran.
    warm_task(benchmark.pk, False)
    assert ran == ["counts"] * 4
    # Under a stream that never stops, a warm runs once none has for BENCHMARK_FIGURES_WARM_DEFER_SECONDS
    # (the mark of the last one gone with its time).
    RefreshQueued.objects.update_or_create(benchmark=benchmark, defaults={"queued_at": timezone.now()})
    warm_task(benchmark.pk, False)
    assert ran == ["counts"] * 4
    cache.delete(warm._ran_key(benchmark.pk))
    warm_task(benchmark.pk, False)
    assert ran == ["counts"] * 5
    warm_task(benchmark.pk, False)
    assert ran == ["counts"] * 5
    # 0: every refresh's warm runs.
    settings.BENCHMARK_FIGURES_WARM_DEFER_SECONDS = 0
    warm_task(benchmark.pk, False)
    assert ran == ["counts"] * 6


@pytest.mark.django_db(transaction=True)
def test_a_warmer_that_fails_leaves_the_others_theirs(cast: Cast, monkeypatch: pytest.MonkeyPatch) -> None:
    benchmark = _benchmark(cast)
    ran: list[str] = []

    def broken(_: Benchmark) -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT missing FROM no_such_table")

    monkeypatch.setattr(warm, "_WARMERS", {})
    register_figures_warmer("first", lambda _: ran.append("first"))
    register_figures_warmer("broken", broken)
    register_figures_warmer("second", lambda _: ran.append(str(Benchmark.objects.get(pk=benchmark.pk).pk)))
    register_figures_warmer("writer", lambda _: ran.append("writer"), writes=True)
    register_figures_warmer("third", lambda _: ran.append("third"))
    result = benchmark_figures_warm(benchmark=benchmark)
    assert result.failed == ["broken"]
    # The one after the failed statement reads the database still (its savepoint was rolled back).
    assert ran == ["first", str(benchmark.pk), "writer", "third"], "a warmer's failure stopped the ones after it"


@pytest.mark.django_db(transaction=True)
@pytest.mark.production_database("reads PostgreSQL's transaction ids and read-only setting")
def test_the_warmers_read_in_one_read_only_transaction_and_one_that_writes_in_its_own(
    cast: Cast, monkeypatch: pytest.MonkeyPatch
) -> None:
    benchmark = _benchmark(cast)
    seen: dict[str, tuple[str, str]] = {}

    def recording(name: str) -> Any:
        def warm_it(_: Benchmark) -> None:
            with connection.cursor() as cursor:
                # The transaction's own identity (every transaction has one, writing or not).
                cursor.execute(
                    "SELECT (SELECT virtualtransaction FROM pg_locks WHERE pid = pg_backend_pid() "
                    "AND locktype = 'virtualxid'), current_setting('transaction_read_only')"
                )
                seen[name] = cursor.fetchone()

        return warm_it

    def broken(_: Benchmark) -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1 / 0")

    monkeypatch.setattr(warm, "_WARMERS", {})
    register_figures_warmer("first", recording("first"))
    register_figures_warmer("broken", broken)
    register_figures_warmer("second", recording("second"))
    register_figures_warmer("writer", recording("writer"), writes=True)
    register_figures_warmer("third", recording("third"))
    result = benchmark_figures_warm(benchmark=benchmark)
    assert result.failed == ["broken"]
    assert set(seen) == {"first", "second", "writer", "third"}, "a warmer's failure stopped the ones after it"
    assert seen["first"] == seen["second"], "two warmers that read ran in transactions of their own"
    assert seen["first"][1] == "on"
    assert seen["writer"][1] == "off" and seen["writer"][0] != seen["first"][0]
    assert seen["third"][1] == "on" and seen["third"][0] not in (seen["first"][0], seen["writer"][0])
    assert not connection.in_atomic_block


# ---- queued to Redis, run by a real worker ----


@pytest.fixture
def worker_queue(redis_url: str, settings: Any, tmp_path: Path) -> Iterator[str]:
    """A real worker on a queue of its own, with this process and the worker sharing the cache in
    Redis (the figures the worker computes are what this process reads)."""
    queue = f"test-warm-{uuid.uuid4().hex[:12]}"
    shared = {key: value for key, value in settings.CACHES["default"].items() if key != "OPTIONS"}
    settings.CACHES = {
        **settings.CACHES,
        "default": {**shared, "BACKEND": "crowdlex.cache.RedisCache", "LOCATION": redis_url},
    }
    environment = {"CACHE_URL": redis_url, "BENCHMARK_FIGURES_MAX_AGE_SECONDS": str(10**9)}
    with running_worker(redis_url=redis_url, queue=queue, log_path=tmp_path / "w.log", environment=environment):
        yield queue


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_warms_the_figures_queued_at_the_commit_of_a_split(
    cast: Cast, client: Client, redis_url: str, monkeypatch: pytest.MonkeyPatch, worker_queue: str, tmp_path: Path
) -> None:
    benchmark = _benchmark(cast)
    client.force_login(cast.researcher)
    with tasks_sent_to(redis_url, worker_queue):
        benchmark_split_seeded(benchmark=benchmark, shares=[("dev", 0.5), ("test", 0.5)], seed=1)
    deadline = time.monotonic() + 90
    # The warm says in the worker's log when every warmer has run (annotation.warm).
    log = tmp_path / "w.log"
    while time.monotonic() < deadline:
        if f"warm of benchmark {benchmark.pk} (every figure)" in log.read_text():
            break
        time.sleep(0.2)
    else:
        pytest.fail("the worker did not warm the figures in time")
    entry = f"benchmark-figures:{benchmark.pk}:{figures_key(benchmark_id=benchmark.pk)}:{STATISTICS_PAGE}"
    assert cache.get(entry) is not None
    assert _computed_by_pages(client, benchmark, monkeypatch) == {}
    # The leaderboard of each split too.
    with monkeypatch.context() as patch:
        record = Computed(patch)
        for split in ("dev", "test"):
            services.benchmark_leaderboard(benchmark=benchmark, split=split)
    assert record.names == []
