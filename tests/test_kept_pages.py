"""Researcher pages kept whole in the shared cache (crowdlex.kept_pages, docs/design.md §7, "Kept
pages"): the kept answer is Django's, it is served with one round trip to Redis and one statement,
and never after anything it shows changed, to anyone else, or once its reader lost it."""

from __future__ import annotations

import re
import threading
from http.cookies import SimpleCookie
from io import BytesIO
from typing import Any
from urllib.parse import urlencode

import pytest
from django.contrib.auth.models import User
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, connection
from django.middleware.csrf import _unmask_cipher_token  # type: ignore[attr-defined]
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation.access import access_grant, access_revoke
from annotation.models import Benchmark, Role, Target
from bench.floor import CacheCall, cache_calls_recorded
from crowdlex import accounts, kept_pages
from crowdlex.api_errors import ResolvingOnceHandler
from hits.models import Assignment, Batch
from tests.base import Cast, make_user
from tests.routes import benchmark_ids, researcher_routes, route_url
from tests.scheme_benchmarks import BENCHMARK_SCHEMES, scheme_benchmark

pytestmark = pytest.mark.django_db

# The route names that opt in (crowdlex.kept_pages.kept_page in the rooms' urls), as the layer finds them.
KEPT_ROUTES = {
    "benchmark-detail",
    "benchmark-activity",
    "batch-list",
    "benchmark-assignments",
    "batch-detail",
    "batch-live",
    "hit-detail",
    "benchmark-flags",
    "design-template",
    "benchmark-live",
    "pipeline-progress",
    "pipeline-workers",
    "benchmark-settings",
    "analysis-statistics",
    "target-list",
    "target-detail",
    "adjudication-queue",
    "adjudication-item",
    "analysis-evaluation",
    "analysis-exports",
    "data-items",
    "data-candidates",
    "data-labels",
    "data-hits",
    "data-workers",
    "data-items-csv",
    "data-candidates-csv",
    "data-labels-csv",
    "data-hits-csv",
    "data-workers-csv",
    "batch-export",
    "analysis-proposals",
    "analysis-sws-suggestions",
    "benchmark-list",
    "benchmark-access",
    "benchmark-import",
    "import-job",
    "people-import",
    "batch-design",
    "batch-worker-preview",
    "qualification-detail",
    "benchmark-operations",
    "people",
    "people-detail",
}

# The pages that show nothing but their reader's account (crowdlex.kept_pages.ACCOUNT_ONLY).
ACCOUNT_ONLY_PATHS = {"/people/import/"}

_TOKEN = re.compile(r'(name="csrfmiddlewaretoken" value=")([A-Za-z0-9]{64})(")')


class Answer:
    def __init__(self, status: str, headers: list[tuple[str, str]], body: bytes, django: int) -> None:
        self.status, self.headers, self.body, self.django = status, headers, body, django

    @property
    def code(self) -> int:
        return int(self.status.split()[0])

    def header(self, name: str) -> str | None:
        return next((value for key, value in self.headers if key.lower() == name.lower()), None)

    def same_page(self) -> tuple[str, list[tuple[str, str]], bytes]:
        """What two renders of a page share: the form tokens unmasked (each render masks the one
        secret anew) and ``Expires`` (the second it was written) left out."""
        body = _TOKEN.sub(lambda m: m.group(1) + _unmask_cipher_token(m.group(2)) + m.group(3), self.body.decode())
        return self.status, [(k, v) for k, v in self.headers if k != "Expires"], body.encode()

    def token(self) -> str:
        found = _TOKEN.search(self.body.decode())
        assert found is not None
        return found.group(2)


class Browser:
    """A browser's cookies, its requests answered by the WSGI application production serves
    (``crowdlex.wsgi``: the kept pages' layer in front of Django's handler), or by Django alone."""

    def __init__(self, user: User | None = None) -> None:
        self.cookies: dict[str, str] = {}
        if user is not None:
            client = Client()
            client.force_login(user)
            self.cookies.update({key: morsel.value for key, morsel in client.cookies.items()})
        self.django = ResolvingOnceHandler()
        self.app = kept_pages.KeptPages(self.django)

    def environ(
        self, method: str, url: str, *, data: dict[str, str] | None = None, headers: dict[str, str] | None = None
    ) -> dict[str, Any]:
        path, _, query = url.partition("?")
        body = urlencode(data or {}).encode()
        environ: dict[str, Any] = {
            "REQUEST_METHOD": method,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "SCRIPT_NAME": "",
            "SERVER_NAME": "testserver",
            "SERVER_PORT": "80",
            "HTTP_HOST": "testserver",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "wsgi.url_scheme": "http",
            "wsgi.input": BytesIO(body),
            "wsgi.errors": BytesIO(),
            "wsgi.version": (1, 0),
            "wsgi.multithread": False,
            "wsgi.multiprocess": False,
            "wsgi.run_once": False,
            "HTTP_COOKIE": "; ".join(f"{key}={value}" for key, value in self.cookies.items()),
        }
        if method == "POST":
            environ.update({"CONTENT_TYPE": "application/x-www-form-urlencoded", "CONTENT_LENGTH": str(len(body))})
        environ.update({"HTTP_" + name.upper().replace("-", "_"): value for name, value in (headers or {}).items()})
        return environ

    def request(
        self,
        method: str,
        url: str,
        *,
        data: dict[str, str] | None = None,
        django_only: bool = False,
        headers: dict[str, str] | None = None,
    ) -> Answer:
        environ = self.environ(method, url, data=data, headers=headers)
        started: dict[str, Any] = {}
        calls = []

        def count(**kwargs: Any) -> None:
            calls.append(1)

        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
            started.update(status=status, headers=headers)

        request_started.connect(count, dispatch_uid="kept-pages-test")
        # As the test client does: the test's transaction stays open across the requests.
        request_started.disconnect(close_old_connections)
        request_finished.disconnect(close_old_connections)
        try:
            app: Any = self.django if django_only else self.app
            result = app(environ, start)
            try:
                content = b"".join(result)
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()
        finally:
            request_started.disconnect(dispatch_uid="kept-pages-test")
            request_started.connect(close_old_connections)
            request_finished.connect(close_old_connections)
        for name, value in started["headers"]:
            if name == "Set-Cookie":
                for key, morsel in SimpleCookie(value).items():
                    if morsel["max-age"] == "0" or morsel.value == "":
                        self.cookies.pop(key, None)
                    else:
                        self.cookies[key] = morsel.value
        return Answer(started["status"], started["headers"], content, len(calls))

    def get(self, url: str, **headers: str) -> Answer:
        return self.request("GET", url, headers=headers)

    def post(self, url: str, data: dict[str, str]) -> Answer:
        return self.request("POST", url, data=data)


def kept_twice(browser: Browser, url: str, **headers: str) -> Answer:
    """The page requested until it is served kept (the first fills the kept account and the CSRF
    cookie, the next keeps the page); the kept answer, which Django did not render."""
    for _ in range(3):
        answer = browser.get(url, **headers)
        assert answer.code in (200, 304), (url, answer.status)
    calls: list[Any] = []
    with CaptureQueriesContext(connection) as statements, cache_calls_recorded(calls):
        kept = browser.get(url, **headers)
    assert kept.django == 0, f"{url} was not served kept"
    # What a kept answer costs: the script (the answer, the session, the account's stamps) and the
    # change key's statement; a page of the account alone, the script alone.
    expected = 0 if url.partition("?")[0] in ACCOUNT_ONLY_PATHS else 1
    assert (len(calls), len(statements.captured_queries)) == (1, expected), url
    return kept


@pytest.fixture
def researcher(kept: accounts.Keeper, cast: Cast) -> Browser:
    return Browser(cast.researcher)


@pytest.fixture
def swords(cast: Cast) -> tuple[Benchmark, Batch]:
    return scheme_benchmark("swords", cast)


def page_urls(benchmark: Benchmark, batch: Batch | None = None) -> dict[str, str]:
    ids = benchmark_ids(benchmark, batch=batch)
    urls = {name: route_url(route, ids) for name, route in researcher_routes() if name in KEPT_ROUTES}
    urls["benchmark-live?part=batches"] = f"/benchmarks/{benchmark.name}/live/?part=batches"
    return urls


# Which pages opt in.


def test_the_pages_that_opt_in_are_those_listed(kept: accounts.Keeper) -> None:
    from django.urls import get_resolver

    from tests.routes import _walk

    found = {
        pattern.name
        for _, pattern in _walk(get_resolver().url_patterns)
        if getattr(pattern.callback, "kept_page", False)
    }
    assert found == KEPT_ROUTES


def test_a_path_outside_every_kept_route_is_passed_on_without_resolving_it(kept: accounts.Keeper) -> None:
    from django.urls import get_resolver

    from tests.routes import _walk

    layer = kept_pages._layer()
    assert layer is not None
    # Every kept route's path starts with one of the layer's prefixes, so none is passed over.
    for route, pattern in _walk(get_resolver().url_patterns):
        if getattr(pattern.callback, "kept_page", False):
            assert ("/" + route).startswith(layer.prefixes), route
    # An annotator's page, whose path names its assignment, is neither resolved nor remembered.
    for number in range(3):
        assert not layer.kept_route(f"/work/assignments/{number}/")
        assert not layer.kept_route(f"/api/work/assignments/{number}/submit")
    assert layer.routes == {}
    assert layer.kept_route("/benchmarks/") and layer.routes == {"/benchmarks/": True}


# The kept answer is Django's, and costs one round trip and one statement.


@pytest.mark.parametrize("scheme", BENCHMARK_SCHEMES)
def test_every_kept_page_of_every_scheme_is_what_django_renders(scheme: str, researcher: Browser, cast: Cast) -> None:
    benchmark, batch = scheme_benchmark(scheme, cast)
    served = 0
    for name, url in page_urls(benchmark, batch).items():
        first = researcher.get(url)
        if first.code != 200:
            continue
        kept = kept_twice(researcher, url)
        rendered = researcher.request("GET", url, django_only=True)
        assert rendered.django == 1
        assert kept.same_page() == rendered.same_page(), f"{scheme}: {name}"
        served += 1
    assert served >= 20, f"{scheme}: only {served} pages answered"


def test_a_kept_page_costs_one_round_trip_and_one_statement(
    researcher: Browser, swords: tuple[Benchmark, Batch]
) -> None:
    benchmark, _ = swords
    url = f"/benchmarks/{benchmark.name}/statistics/"
    kept_twice(researcher, url)
    calls: list[Any] = []
    with CaptureQueriesContext(connection) as statements, cache_calls_recorded(calls):
        answer = researcher.get(url)
    assert answer.django == 0 and answer.code == 200
    assert len(calls) == 1 and isinstance(calls[0], CacheCall)
    assert len(statements.captured_queries) == 1
    assert "annotation_benchmarkchanges" in statements.captured_queries[0]["sql"].lower()


def test_a_head_request_answers_the_kept_headers_alone(researcher: Browser, swords: tuple[Benchmark, Batch]) -> None:
    benchmark, _ = swords
    url = f"/benchmarks/{benchmark.name}/pipeline/"
    full = kept_twice(researcher, url)
    head = researcher.request("HEAD", url)
    assert head.django == 0 and head.code == 200 and head.body == b""
    assert head.header("Content-Length") == full.header("Content-Length")


def test_the_live_polls_304_is_served_kept(researcher: Browser, swords: tuple[Benchmark, Batch]) -> None:
    benchmark, _ = swords
    url = f"/benchmarks/{benchmark.name}/live/"
    tag = kept_twice(researcher, url).header("ETag")
    assert tag
    not_modified = kept_twice(researcher, url, **{"If-None-Match": tag})
    assert not_modified.code == 304 and not_modified.body == b""
    assert (
        not_modified.same_page()
        == researcher.request("GET", url, django_only=True, headers={"If-None-Match": tag}).same_page()
    )


# Every change the page shows is shown at once.


def changed_after(browser: Browser, url: str, change: Any) -> Answer:
    """The page kept, then ``change()``; the next answer, which must not be the kept one."""
    before = kept_twice(browser, url)
    change()
    after = browser.get(url)
    assert after.django == 1, f"{url} was served kept after the change"
    assert after.same_page() == browser.request("GET", url, django_only=True).same_page()
    return before


def test_a_submit_shows_at_once(researcher: Browser, swords: tuple[Benchmark, Batch], cast: Cast) -> None:
    from annotation.models import Worker
    from hits.models import HITItem
    from hits.services import assignment_claim_next, assignment_submit
    from tests.scheme_benchmarks import scheme_answer

    benchmark, _ = swords

    def submit() -> None:
        assignment = assignment_claim_next(worker=Worker.objects.get(user=cast.bob), benchmark=benchmark)
        assert assignment is not None
        items = HITItem.objects.filter(hit_id=assignment.hit_id)
        assignment_submit(assignment=assignment, answers={item.pk: scheme_answer("swords", item) for item in items})

    target = Target.objects.filter(benchmark=benchmark).order_by("pk").first()
    assert target is not None
    changed_after(researcher, f"/targets/{target.pk}/", submit)
    changed_after(researcher, f"/benchmarks/{benchmark.name}/live/", submit)


def test_a_refresh_a_batch_action_and_a_settings_save_show_at_once(
    researcher: Browser, swords: tuple[Benchmark, Batch], cast: Cast
) -> None:
    from hits.services import batch_close
    from review.services import benchmark_refresh

    benchmark, batch = swords
    changed_after(
        researcher, f"/benchmarks/{benchmark.name}/pipeline/", lambda: benchmark_refresh(benchmark=benchmark, full=True)
    )
    changed_after(researcher, f"/batches/{batch.pk}/", lambda: batch_close(batch=batch, by=cast.researcher))
    settings_url = f"/benchmarks/{benchmark.name}/settings/"
    page = kept_twice(researcher, settings_url)
    # The settings form, posted with the kept page's token: accepted, and the page shows the save.
    answer = researcher.post(settings_url, settings_form(page, benchmark))
    assert answer.code == 302, answer.body[:500]
    after = researcher.get(settings_url)
    assert after.django == 1


def settings_form(page: Answer, benchmark: Benchmark) -> dict[str, str]:
    """The settings page's first form as a browser posts it: its fields' values, the reward moved."""
    html = page.body.decode()
    form = re.search(r"<form[^>]*method=\"post\"[^>]*>(.*?)</form>", html[html.index("<main") :], re.S)
    assert form is not None
    data: dict[str, str] = {}
    for tag in re.finditer(r"<input[^>]*>", form.group(1)):
        name = re.search(r'name="([^"]+)"', tag.group(0))
        value = re.search(r'value="([^"]*)"', tag.group(0))
        kind = re.search(r'type="([^"]+)"', tag.group(0))
        if name is None or (kind and kind.group(1) == "checkbox" and "checked" not in tag.group(0)):
            continue
        data[name.group(1)] = value.group(1) if value else ""
    for select in re.finditer(r'<select[^>]*name="([^"]+)"[^>]*>(.*?)</select>', form.group(1), re.S):
        chosen = re.search(r'<option value="([^"]*)"[^>]*selected', select.group(2)) or re.search(
            r'<option value="([^"]*)"', select.group(2)
        )
        data[select.group(1)] = chosen.group(1) if chosen else ""
    for area in re.finditer(r'<textarea[^>]*name="([^"]+)"[^>]*>(.*?)</textarea>', form.group(1), re.S):
        data[area.group(1)] = area.group(2).strip()
    if "reward" in data:
        data["reward"] = "0.42"
    return data


def test_a_flag_an_export_job_and_an_admin_edit_show_at_once(
    researcher: Browser, swords: tuple[Benchmark, Batch], cast: Cast, settings: Any, tmp_path: Any
) -> None:
    from analysis.models import ExportJob
    from analysis.services.exports import export_job_run
    from hits.services import hit_flag_set

    benchmark, _ = swords
    assignment = Assignment.objects.filter(hit__batch__benchmark=benchmark).first()
    assert assignment is not None
    changed_after(
        researcher,
        f"/benchmarks/{benchmark.name}/hit-flags/",
        lambda: hit_flag_set(assignment=assignment, reason="other", note="which sense?"),
    )
    settings.MEDIA_ROOT = str(tmp_path)
    job = ExportJob.objects.create(benchmark=benchmark, format="labels-csv", created_by=cast.researcher)
    changed_after(researcher, f"/benchmarks/{benchmark.name}/exports/", lambda: export_job_run(job_id=job.pk))
    # An admin edit (a job deleted in the admin by a superuser): the page shows it at once.
    admin = Client()
    cast.researcher.is_superuser = True
    cast.researcher.save()
    admin.force_login(cast.researcher)
    url = f"/benchmarks/{benchmark.name}/exports/"
    kept_twice(researcher, url)
    kept_twice(researcher, url)  # the account changed (superuser): kept again under its new stamps
    deleted = admin.post(f"/admin/analysis/exportjob/{job.pk}/delete/", {"post": "yes"})
    assert deleted.status_code == 302
    assert not ExportJob.objects.filter(pk=job.pk).exists()
    after = researcher.get(url)
    assert after.django == 1


def test_a_role_granted_or_removed_shows_at_once(
    kept: accounts.Keeper, swords: tuple[Benchmark, Batch], cast: Cast
) -> None:
    benchmark, _ = swords
    owner = make_user("olga", researcher=True)
    viewer = make_user("victor", researcher=True)
    access_grant(benchmark=benchmark, user=owner, role=Role.OWNER, by=owner)
    access_grant(benchmark=benchmark, user=viewer, role=Role.VIEWER, by=owner)
    browser = Browser(viewer)
    url = f"/benchmarks/{benchmark.name}/"
    kept_twice(browser, url)
    access_revoke(benchmark=benchmark, user=viewer)
    refused = browser.get(url)
    assert refused.django == 1 and refused.code == 404


def test_a_group_removed_from_the_reader_shows_at_once(
    researcher: Browser, swords: tuple[Benchmark, Batch], cast: Cast
) -> None:
    from annotation.roles import RESEARCHERS

    benchmark, _ = swords
    url = f"/benchmarks/{benchmark.name}/statistics/"
    kept_twice(researcher, url)
    cast.researcher.groups.remove(cast.researcher.groups.get(name=RESEARCHERS))
    answer = researcher.get(url)
    assert answer.django == 1 and answer.code in (302, 403, 404)


# Isolation.


def test_no_other_session_user_or_browser_is_served_an_entry(
    kept: accounts.Keeper, swords: tuple[Benchmark, Batch], cast: Cast
) -> None:
    benchmark, _ = swords
    url = f"/benchmarks/{benchmark.name}/pipeline/"
    first = Browser(cast.researcher)
    kept_twice(first, url)
    second = Browser(cast.researcher)  # another session of the same account
    assert second.get(url).django == 1
    other = Browser(make_user("otto", researcher=True))
    answer = other.get(url)
    assert answer.django == 1 and b"otto" in answer.body
    anonymous = Browser()
    anonymous.cookies = {key: value for key, value in first.cookies.items() if key != "sessionid"}
    signed_out = anonymous.get(url)
    assert signed_out.django == 1 and signed_out.code == 302


def test_a_session_logged_out_expired_or_with_a_changed_password_is_never_served(
    kept: accounts.Keeper, swords: tuple[Benchmark, Batch], cast: Cast
) -> None:
    benchmark, _ = swords
    url = f"/benchmarks/{benchmark.name}/statistics/"
    browser = Browser(cast.researcher)
    kept_twice(browser, url)
    stolen = dict(browser.cookies)
    token = kept_twice(browser, url).token()
    assert browser.post("/accounts/logout/", {"csrfmiddlewaretoken": token}).code == 302
    thief = Browser()
    thief.cookies = stolen
    answer = thief.get(url)
    assert answer.django == 1 and answer.code == 302

    expired = Browser(cast.researcher)
    kept_twice(expired, url)
    kept.client.delete(kept.cache.make_key("django.contrib.sessions.cached_db" + expired.cookies["sessionid"]))
    from django.contrib.sessions.models import Session

    Session.objects.filter(session_key=expired.cookies["sessionid"]).delete()
    answer = expired.get(url)
    assert answer.django == 1 and answer.code == 302

    changed = Browser(cast.researcher)
    kept_twice(changed, url)
    cast.researcher.set_password("another horse battery")
    cast.researcher.save()
    answer = changed.get(url)
    assert answer.django == 1 and answer.code == 302


def test_a_pending_message_is_shown_not_a_kept_page(
    researcher: Browser, swords: tuple[Benchmark, Batch], cast: Cast
) -> None:
    _benchmark, batch = swords
    url = f"/batches/{batch.pk}/"
    page = kept_twice(researcher, url)
    closed = researcher.post(f"/batches/{batch.pk}/close/", {"csrfmiddlewaretoken": page.token(), "confirmed": "yes"})
    assert closed.code == 302
    assert "messages" in researcher.cookies
    shown = researcher.get(url)
    assert shown.django == 1 and b"closed" in shown.body.lower()


def test_a_kept_pages_form_token_is_accepted(researcher: Browser, swords: tuple[Benchmark, Batch]) -> None:
    _benchmark, batch = swords
    page = kept_twice(researcher, f"/batches/{batch.pk}/")
    closed = researcher.post(f"/batches/{batch.pk}/close/", {"csrfmiddlewaretoken": page.token(), "confirmed": "yes"})
    assert closed.code == 302
    batch.refresh_from_db()
    assert batch.status == "closed"


# Without Redis, or with the setting at 0: Django alone.


def test_without_a_shared_cache_or_with_the_setting_at_0_every_request_goes_to_django(
    settings: Any, cast: Cast, redis_url: str
) -> None:
    benchmark, _ = scheme_benchmark("swords", cast)
    url = f"/benchmarks/{benchmark.name}/statistics/"
    browser = Browser(cast.researcher)
    for _ in range(3):
        answer = browser.get(url)
        assert answer.django == 1 and answer.code == 200
    assert answer.same_page() == browser.request("GET", url, django_only=True).same_page()
    settings.KEPT_PAGE_SECONDS = 0
    settings.CACHES = {
        "default": {"BACKEND": "crowdlex.cache.RedisCache", "LOCATION": redis_url, "KEY_PREFIX": "kept-off"}
    }
    settings.SESSION_ENGINE = "crowdlex.sessions"
    browser = Browser(cast.researcher)
    for _ in range(3):
        assert browser.get(url).django == 1


# The race: a change between the layer's read of the stamps and Django's render.


@pytest.mark.django_db(transaction=True)
def test_a_change_committed_while_the_page_renders_is_never_hidden(kept: accounts.Keeper) -> None:
    from annotation.changes import benchmark_changed
    from hits.services import batch_close

    cast = __import__("tests.base", fromlist=["make_cast"]).make_cast()
    benchmark, batch = scheme_benchmark("swords", cast)
    url = f"/batches/{batch.pk}/"
    browser = Browser(cast.researcher)
    kept_twice(browser, url)
    benchmark_changed(benchmark_id=benchmark.pk)  # the next request renders again
    inside, go_on = threading.Event(), threading.Event()
    original = kept_pages.Benchmarks.keys

    def slow_keys(self: Any, request: Any, kwargs: Any) -> Any:
        found = original(self, request, kwargs)
        inside.set()  # the key is read: the change commits now, before the view reads anything
        assert go_on.wait(10)
        return found

    def change() -> None:
        assert inside.wait(10)
        batch_close(batch=batch)
        go_on.set()
        connection.close()

    kept_pages.Benchmarks.keys = slow_keys  # type: ignore[method-assign]
    try:
        thread = threading.Thread(target=change)
        thread.start()
        rendered = browser.get(url)
        thread.join()
    finally:
        kept_pages.Benchmarks.keys = original  # type: ignore[method-assign]
    assert rendered.django == 1
    after = browser.get(url)
    assert after.django == 1, "the answer rendered during the change was served under the key before it"
    # The answer rendered during the change shows it (newer than the key it was kept under), and the
    # key read after the change differs: not served.
    assert b"Reopen batch" in rendered.body and b"Reopen batch" in after.body


def test_a_session_changed_by_another_request_is_rendered_again(
    researcher: Browser, swords: tuple[Benchmark, Batch]
) -> None:
    from crowdlex.sessions import SessionStore

    benchmark, _ = swords
    url = f"/benchmarks/{benchmark.name}/pipeline/"
    kept_twice(researcher, url)
    session = SessionStore(researcher.cookies["sessionid"])
    session["data_browser_columns"] = ["text"]
    session.save()
    assert researcher.get(url).django == 1
    assert researcher.get(url).django == 0


def test_another_csrf_cookie_is_rendered_again(researcher: Browser, swords: tuple[Benchmark, Batch]) -> None:
    from django.middleware.csrf import _get_new_csrf_string

    benchmark, _ = swords
    url = f"/benchmarks/{benchmark.name}/pipeline/"
    kept = kept_twice(researcher, url)
    researcher.cookies["csrftoken"] = _get_new_csrf_string()
    again = researcher.get(url)
    assert again.django == 1
    assert _unmask_cipher_token(again.token()) == researcher.cookies["csrftoken"] != _unmask_cipher_token(kept.token())


def test_a_new_period_of_the_figures_is_rendered_again(
    researcher: Browser, swords: tuple[Benchmark, Batch], settings: Any
) -> None:
    import time

    settings.BENCHMARK_FIGURES_MAX_AGE_SECONDS = 1
    benchmark, _ = swords
    url = f"/benchmarks/{benchmark.name}/live/"
    for _ in range(5):
        # Kept, then asked again in the next second's period.
        started = int(time.time())
        for _ in range(3):
            researcher.get(url)
        served = researcher.get(url)
        if int(time.time()) == started and served.django == 0:
            break
    else:
        pytest.fail("never served kept within one period")
    while int(time.time()) == started:
        time.sleep(0.05)
    assert researcher.get(url).django == 1


@pytest.mark.parametrize("backend", ["local", "mturk", "prolific"])
def test_a_crowds_batch_pages_are_what_django_renders(
    backend: str, researcher: Browser, cast: Cast, settings: Any
) -> None:
    from tests.crowds.crowd_helpers import SITE, make_batch, mturk_worker, publish_locally, submitted_assignment

    settings.SITE_URL = SITE
    batch = make_batch(name=f"crowd-{backend}", backend=backend, hits=2)
    if backend != "local":
        publish_locally(batch)
        hit = batch.hits.order_by("pk").first()
        assert hit is not None
        submitted_assignment(hit, mturk_worker("W1"), external_id="A1")
    served = 0
    for name, url in page_urls(batch.benchmark, batch).items():
        if researcher.get(url).code != 200:
            continue
        kept = kept_twice(researcher, url)
        assert kept.same_page() == researcher.request("GET", url, django_only=True).same_page(), f"{backend}: {name}"
        served += 1
    assert served >= 20, f"{backend}: only {served} pages answered"


def test_a_message_waiting_in_its_cookie_is_shown_and_an_emptied_cookie_is_none(
    researcher: Browser, swords: tuple[Benchmark, Batch]
) -> None:
    from django.contrib.messages import constants
    from django.contrib.messages.storage.base import Message
    from django.contrib.messages.storage.cookie import CookieStorage
    from django.test import RequestFactory

    benchmark, _ = swords
    url = f"/benchmarks/{benchmark.name}/pipeline/"
    kept_twice(researcher, url)
    storage = CookieStorage(RequestFactory().get("/"))
    researcher.cookies["messages"] = storage._encode(  # type: ignore[attr-defined]
        [Message(constants.INFO, "Saved elsewhere")]
    )
    shown = researcher.get(url)
    assert shown.django == 1 and b"Saved elsewhere" in shown.body
    assert "messages" not in researcher.cookies  # shown, the page emptied the cookie
    researcher.cookies["messages"] = ""  # a browser that keeps the emptied cookie
    assert researcher.get(url).django == 0


@pytest.mark.parametrize("page", ["statistics/", "pipeline/", "live/", "exports/", ""])
def test_a_page_not_yet_kept_costs_what_django_alone_does_and_the_write_that_keeps_it(
    page: str, kept: accounts.Keeper, swords: tuple[Benchmark, Batch], cast: Cast
) -> None:
    benchmark, _ = swords
    url = f"/benchmarks/{benchmark.name}/{page}"
    browser = Browser(cast.researcher)
    for _ in range(3):  # the CSRF cookie, the kept account and the figures, filled
        assert browser.request("GET", url, django_only=True).code == 200
    alone: list[Any] = []
    with CaptureQueriesContext(connection) as statements_alone, cache_calls_recorded(alone):
        browser.request("GET", url, django_only=True)
    layered: list[Any] = []
    with CaptureQueriesContext(connection) as statements_layered, cache_calls_recorded(layered):
        answer = browser.get(url)
    assert answer.django == 1
    # The change key read before the view is the page's own figures key: no statement more.
    assert len(statements_layered.captured_queries) == len(statements_alone.captured_queries)
    # The session and account read by the layer's script, handed to Django; the answer written.
    assert len(layered) == len(alone) + 1
    assert browser.get(url).django == 0


@pytest.mark.django_db(transaction=True)
def test_an_account_change_committed_while_the_page_renders_is_never_hidden(
    kept: accounts.Keeper, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.contrib.auth.models import Group

    from annotation.changes import benchmark_changed
    from annotation.roles import RESEARCHERS
    from tests.base import make_cast

    cast = make_cast()
    benchmark, _ = scheme_benchmark("swords", cast)
    url = f"/benchmarks/{benchmark.name}/statistics/"
    browser = Browser(cast.researcher)
    kept_twice(browser, url)
    benchmark_changed(benchmark_id=benchmark.pk)  # the next request renders
    inside, go_on = threading.Event(), threading.Event()
    original = accounts.account_signed_in

    def slow_account(*args: Any, **kwargs: Any) -> Any:
        user = original(*args, **kwargs)
        inside.set()  # the account is read: the change commits now, before the page is rendered
        assert go_on.wait(10)
        return user

    def change() -> None:
        assert inside.wait(10)
        cast.researcher.groups.remove(Group.objects.get(name=RESEARCHERS))
        go_on.set()
        connection.close()

    monkeypatch.setattr(accounts, "account_signed_in", slow_account)
    thread = threading.Thread(target=change)
    thread.start()
    rendered = browser.get(url)
    thread.join()
    monkeypatch.setattr(accounts, "account_signed_in", original)
    assert rendered.django == 1 and rendered.code == 200  # rendered for the researcher they were
    after = browser.get(url)
    assert after.django == 1 and after.code in (302, 403, 404)


# The pages outside one benchmark's key: the benchmarks' list, the access and import pages, an import
# job's, the people's import (docs/design.md §7, "Kept pages": the site's change key).


def test_the_benchmarks_list_shows_each_benchmark_made_renamed_shared_or_deleted_at_once(
    researcher: Browser, swords: tuple[Benchmark, Batch], cast: Cast
) -> None:
    from annotation.services import benchmark_create

    url = "/benchmarks/"
    other = make_user("olga", researcher=True)
    made: list[Benchmark] = []

    def shared() -> None:  # made with no owner (a command): every researcher sees it
        made.append(Benchmark.objects.create(name="shared-one", scheme="swords", title="Shared one"))

    changed_after(researcher, url, shared)
    assert b"shared-one" in researcher.get(url).body

    def renamed() -> None:
        made[0].title = "Renamed title"
        made[0].save()

    changed_after(researcher, url, renamed)
    assert b"Renamed title" in researcher.get(url).body
    private = benchmark_create(name="olgas-own", scheme="swords", created_by=other)
    kept_twice(researcher, url)
    assert b"olgas-own" not in researcher.get(url).body
    changed_after(
        researcher, url, lambda: access_grant(benchmark=private, user=cast.researcher, role=Role.VIEWER, by=other)
    )
    assert b"olgas-own" in researcher.get(url).body
    changed_after(researcher, url, lambda: made[0].delete())
    assert b"Renamed title" not in researcher.get(url).body
    # Another researcher's list is their own: it never shows the benchmark shared with the reader.
    theirs = Browser(make_user("otto", researcher=True))
    answer = theirs.get(url)
    assert answer.django == 1 and b"olgas-own" not in answer.body


def test_the_access_page_shows_a_member_renamed_or_granted_at_once(
    researcher: Browser, swords: tuple[Benchmark, Batch], cast: Cast
) -> None:
    benchmark, _ = swords
    url = f"/benchmarks/{benchmark.name}/access/"
    owner = make_user("olga", researcher=True)
    access_grant(benchmark=benchmark, user=owner, role=Role.OWNER, by=owner)
    access_grant(benchmark=benchmark, user=cast.researcher, role=Role.OWNER, by=owner)

    def renamed() -> None:
        owner.username = "olga-renamed"
        owner.save()

    changed_after(researcher, url, renamed)
    assert b"olga-renamed" in researcher.get(url).body
    viewer = make_user("victor", researcher=True)
    changed_after(researcher, url, lambda: access_grant(benchmark=benchmark, user=viewer, role=Role.VIEWER, by=owner))
    assert b"victor" in researcher.get(url).body


def test_the_batches_page_offers_an_annotator_account_made_renamed_or_deactivated_at_once(
    researcher: Browser, swords: tuple[Benchmark, Batch]
) -> None:
    benchmark, _ = swords
    url = f"/benchmarks/{benchmark.name}/batches/"
    made: list[Any] = []
    changed_after(researcher, url, lambda: made.append(make_user("nadia")))
    assert b"nadia" in researcher.get(url).body

    def renamed() -> None:
        made[0].username = "nadia-renamed"
        made[0].save()

    changed_after(researcher, url, renamed)
    assert b"nadia-renamed" in researcher.get(url).body

    def deactivated() -> None:
        made[0].is_active = False
        made[0].save()

    changed_after(researcher, url, deactivated)
    assert b"nadia-renamed" not in researcher.get(url).body


def _upload(text: bytes) -> Any:
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile("words.jsonl", text)


def test_an_import_job_is_kept_in_each_state_and_the_import_page_shows_each_of_them(
    researcher: Browser, swords: tuple[Benchmark, Batch], cast: Cast, settings: Any, tmp_path: Any
) -> None:
    from annotation.importers.jobs import import_job_create, import_job_run, import_jobs_fail_stuck
    from annotation.models import ImportJob, ImportJobStatus

    settings.MEDIA_ROOT = str(tmp_path)
    benchmark, _ = swords
    page = f"/benchmarks/{benchmark.name}/import/"
    made: list[ImportJob] = []

    def create() -> None:
        made.append(
            import_job_create(upload=_upload(b"not json\n"), benchmark_name=benchmark.name, created_by=cast.researcher)
        )

    changed_after(researcher, page, create)
    job = made[0]
    assert f'href="/import-jobs/{job.pk}/"'.encode() in researcher.get(page).body
    # Pending: kept until a worker claims it.
    job_url = f"/import-jobs/{job.pk}/"
    assert b"Waiting for a worker" in kept_twice(researcher, job_url).body
    # Running (claimed by a worker), then stopped as stuck: the import page and the job's show each state.
    ImportJob.objects.filter(pk=job.pk).update(created_at=job.created_at - timezone_delta(settings))

    def claimed() -> None:
        from django.core.cache import cache

        from annotation.importers import jobs

        with_claim_only(jobs, job.pk)
        cache.delete(jobs.import_job_progress_key(job.pk))  # its worker fell silent

    changed_after(researcher, page, claimed)
    assert b"running" in researcher.get(page).body
    running = researcher.get(job_url)
    assert running.django == 1 and b"Reading the file" in running.body
    kept_twice(researcher, job_url)
    changed_after(researcher, page, lambda: import_jobs_fail_stuck())
    job.refresh_from_db()
    assert job.status == ImportJobStatus.FAILED
    stopped = researcher.get(job_url)
    assert stopped.django == 1 and b"Stopped: not finished" in stopped.body
    # Finished: kept, and its creator renamed shows at once.
    kept_twice(researcher, job_url)

    def renamed() -> None:
        cast.researcher.username = "renamed-researcher"
        cast.researcher.save()

    # The reader's own account changed too (its stamps); the job's page shows the new name.
    before = kept_twice(researcher, job_url)
    renamed()
    after = researcher.get(job_url)
    assert after.django == 1 and b"renamed-researcher" in after.body and b"renamed-researcher" not in before.body
    # A job run to its end (a file that fails to import): its page and the import page show it.
    second: list[ImportJob] = []
    changed_after(
        researcher,
        page,
        lambda: second.append(
            import_job_create(upload=_upload(b"not json\n"), benchmark_name=benchmark.name, created_by=cast.researcher)
        ),
    )
    changed_after(researcher, page, lambda: import_job_run(job_id=second[0].pk))
    assert kept_twice(researcher, f"/import-jobs/{second[0].pk}/").code == 200


def timezone_delta(settings: Any) -> Any:
    from datetime import timedelta

    return timedelta(seconds=settings.IMPORT_JOB_TIMEOUT_SECONDS + 60)


def with_claim_only(jobs: Any, job_id: int) -> None:
    """The job claimed by a worker (pending to running) that then falls silent: the claim alone."""
    original = jobs.import_job_file

    def vanished(job: Any) -> Any:
        raise KeyboardInterrupt  # the worker ends right after its claim

    jobs.import_job_file = vanished
    try:
        jobs.import_job_run(job_id=job_id)
    except KeyboardInterrupt:
        pass
    finally:
        jobs.import_job_file = original


def test_the_people_import_page_is_kept_with_no_statement_and_follows_the_account(
    researcher: Browser, cast: Cast
) -> None:
    from annotation.roles import RESEARCHERS

    url = "/people/import/"
    kept = kept_twice(researcher, url)
    assert kept.same_page() == researcher.request("GET", url, django_only=True).same_page()
    other = Browser(make_user("otto", researcher=True))
    assert other.get(url).django == 1
    cast.researcher.groups.remove(cast.researcher.groups.get(name=RESEARCHERS))
    answer = researcher.get(url)
    assert answer.django == 1 and answer.code in (302, 403, 404)


@pytest.mark.parametrize("backend", ["local", "mturk", "prolific"])
def test_a_batchs_design_and_preview_show_a_design_saved_at_once(
    backend: str, researcher: Browser, cast: Cast, settings: Any
) -> None:
    from hits.design.services import batch_design_set
    from tests.crowds.crowd_helpers import SITE, make_batch, publish_locally

    settings.SITE_URL = SITE
    batch = make_batch(name=f"design-{backend}", backend=backend, hits=2)
    if backend != "local":
        publish_locally(batch)
    for url in (f"/batches/{batch.pk}/design/", f"/batches/{batch.pk}/preview/"):
        first = kept_twice(researcher, url)
        assert first.same_page() == researcher.request("GET", url, django_only=True).same_page()
        instructions = f"Read closely ({url})"

        def saved(text: str = instructions) -> None:
            batch_design_set(batch=batch, data={"instructions": text}, by=cast.researcher)

        changed_after(researcher, url, saved)
        assert instructions.encode() in researcher.get(url).body


def test_the_qualification_page_shows_the_test_built_or_switched_and_each_attempt_at_once(
    researcher: Browser, swords: tuple[Benchmark, Batch], cast: Cast
) -> None:
    from annotation.models import Worker
    from hits.qualification import (
        qualification_attempt_reset,
        qualification_attempt_start,
        qualification_attempt_submit,
        qualification_set_active,
    )
    from hits.qualification.models import QualificationAttempt, QualificationTest
    from tests.hits.qualification_data import expected_answers, with_test

    benchmark, _ = swords
    url = f"/benchmarks/{benchmark.name}/qualification/"
    changed_after(researcher, url, lambda: with_test(benchmark))
    test = QualificationTest.objects.get(benchmark=benchmark)
    changed_after(researcher, url, lambda: with_test(benchmark, length=4))
    assert researcher.get(url).django == 0
    worker = Worker.objects.get(user=cast.bob)
    changed_after(researcher, url, lambda: qualification_attempt_start(test=test, worker=worker))
    attempt = QualificationAttempt.objects.get(test=test, worker=worker)
    changed_after(
        researcher, url, lambda: qualification_attempt_submit(attempt=attempt, answers=expected_answers(attempt))
    )
    changed_after(researcher, url, lambda: qualification_set_active(test=test, active=False))
    changed_after(researcher, url, lambda: qualification_attempt_reset(attempt=attempt))
    # Each page of the items is its own answer; another researcher is served none of them.
    kept_twice(researcher, url + "?page=1")
    assert Browser(make_user("otto", researcher=True)).get(url).django == 1


def test_the_operations_page_shows_a_notification_its_e_mail_and_each_delivery_at_once(
    researcher: Browser, swords: tuple[Benchmark, Batch], cast: Cast, settings: Any
) -> None:
    from hits.notifications import notification_record, notification_settings_update
    from hits.notifications.models import Notification, NotificationKind
    from hits.notifications.services import notification_deliver

    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    # A receiver that refuses the connection: each post is a failed delivery, recorded at once.
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True
    benchmark, _ = swords
    cast.researcher.email = "rita@lab.example.org"
    cast.researcher.save(update_fields=["email"])
    url = f"/benchmarks/{benchmark.name}/operations/"

    def hooked(webhook_url: str) -> None:
        notification_settings_update(benchmark=benchmark, webhook_url=webhook_url, email_me=True, user=cast.researcher)

    changed_after(researcher, url, lambda: hooked(""))

    def recorded() -> None:
        found = notification_record(
            benchmark=benchmark, kind=NotificationKind.BATCH_DONE, key="batch:1", summary="batch 1 is done", data={}
        )
        assert found is not None

    changed_after(researcher, url, recorded)
    notification = Notification.objects.get(benchmark=benchmark)
    # The e-mail alone (no webhook yet), then the first post, then the second.
    before = changed_after(researcher, url, lambda: notification_deliver(notification_id=notification.pk))
    assert b"sent " not in before.body and b"sent " in researcher.get(url).body
    changed_after(researcher, url, lambda: hooked("http://127.0.0.1:9/hook"))
    changed_after(researcher, url, lambda: notification_deliver(notification_id=notification.pk))
    assert b"try 1" in researcher.get(url).body
    changed_after(researcher, url, lambda: notification_deliver(notification_id=notification.pk, attempt=2))
    assert b"try 2" in researcher.get(url).body
    assert Browser(cast.researcher).get(url).django == 1


def test_the_people_pages_show_a_submit_a_sign_in_a_block_and_any_benchmarks_change_at_once(
    researcher: Browser, swords: tuple[Benchmark, Batch], cast: Cast
) -> None:
    from django.contrib.auth.models import update_last_login

    from annotation.changes import benchmark_changed
    from annotation.models import Worker
    from hits.models import HITItem
    from hits.services import assignment_claim_next, assignment_submit, worker_block
    from tests.scheme_benchmarks import scheme_answer

    benchmark, _ = swords
    other, _ = scheme_benchmark("prolex", cast)
    urls = ["/people/", f"/people/{cast.bob.pk}/", "/people/?q=bo"]
    for url in urls:
        assert kept_twice(researcher, url).same_page() == researcher.request("GET", url, django_only=True).same_page()

    def submit() -> None:
        assignment = assignment_claim_next(worker=Worker.objects.get(user=cast.bob), benchmark=benchmark)
        assert assignment is not None
        items = HITItem.objects.filter(hit_id=assignment.hit_id)
        assignment_submit(assignment=assignment, answers={item.pk: scheme_answer("swords", item) for item in items})

    before = changed_after(researcher, urls[0], submit)
    assert before.body != researcher.get(urls[0]).body
    changed_after(researcher, urls[1], lambda: update_last_login(User, cast.bob))
    changed_after(researcher, urls[0], lambda: worker_block(worker=Worker.objects.get(user=cast.carol), reason="x"))
    changed_after(researcher, urls[1], lambda: benchmark_changed(benchmark_id=other.pk, target_ids=()))
    # Another researcher, or another session of the same one, is served none of them.
    assert Browser(make_user("otto", researcher=True)).get(urls[0]).django == 1
    assert Browser(cast.researcher).get(urls[1]).django == 1


# Downloads: a streamed answer kept when its whole body is small (docs/design.md §7, "Kept pages").


def download_urls(benchmark: Benchmark, batch: Batch) -> dict[str, str]:
    from analysis.browser.tables import TABLES

    urls = {f"data-{table}-csv": f"/benchmarks/{benchmark.name}/data/{table}.csv" for table in TABLES}
    urls["batch-export"] = f"/batches/{batch.pk}/hits.csv"
    return urls


def test_a_small_download_is_kept_and_served_again_byte_for_byte_with_its_headers(
    researcher: Browser, swords: tuple[Benchmark, Batch]
) -> None:
    benchmark, batch = swords
    for name, url in download_urls(benchmark, batch).items():
        kept = kept_twice(researcher, url)
        streamed = researcher.request("GET", url, django_only=True)
        assert streamed.django == 1
        assert kept.body == streamed.body and kept.body.count(b"\n") >= 2, name
        assert [(k, v) for k, v in kept.headers if k != "Expires"] == [
            (k, v) for k, v in streamed.headers if k != "Expires"
        ], name
        assert (kept.header("Content-Disposition") or "").startswith("attachment"), name
        assert (kept.header("Content-Type") or "").startswith("text/csv"), name
        # With a filter: its own answer.
        if name == "data-items-csv":
            filtered = kept_twice(researcher, url + "?dir=desc")
            assert filtered.body != kept.body


def test_a_download_longer_than_the_cap_is_streamed_whole_and_never_kept_whole(
    researcher: Browser, swords: tuple[Benchmark, Batch], settings: Any
) -> None:
    benchmark, _ = swords
    url = f"/benchmarks/{benchmark.name}/data/candidates.csv"
    whole = researcher.request("GET", url, django_only=True).body
    settings.KEPT_PAGE_MAX_BYTES = len(whole) - 1
    answers = [researcher.get(url) for _ in range(4)]
    assert all(answer.body == whole for answer in answers)
    # Django's until the answer was found too long, then its head kept and the rest made after it.
    assert [answer.django for answer in answers] == [1, 0, 0, 0]
    # At the cap exactly, made again (the head kept is served while nothing moved): kept whole.
    from annotation.changes import benchmark_changed

    settings.KEPT_PAGE_MAX_BYTES = len(whole)
    benchmark_changed(benchmark_id=benchmark.pk, target_ids=())
    assert kept_twice(researcher, url).body == whole


def first_chunk(browser: Browser, url: str) -> tuple[bytes, Any, int, int]:
    """The first chunk of ``url``'s answer through the layer, the answer and its chunks' iterator
    (not read further), and the statements and round trips to the cache made before that chunk."""
    calls: list[Any] = []
    environ = browser.environ("GET", url)
    with CaptureQueriesContext(connection) as statements, cache_calls_recorded(calls):
        answer = browser.app(environ, lambda status, headers, exc_info=None: None)
        chunks = iter(answer)
        chunk = next(chunks)
    return chunk, (answer, chunks), len(statements.captured_queries), len(calls)


def over_the_cap(browser: Browser, url: str, settings: Any, *, head: int) -> bytes:
    """``url``'s download found longer than the cap (one byte less than it), its head kept (at most
    ``head`` bytes), then served again from it: the body Django streams, checked to be what the
    layer serves, head and rest, with the script and the change key's statement alone before its
    first byte."""
    whole = browser.request("GET", url, django_only=True).body
    settings.KEPT_PAGE_MAX_BYTES = len(whole) - 1
    settings.KEPT_PAGE_HEAD_BYTES = head
    made = browser.get(url)  # Django's (the CSRF cookie and the kept account filled the first time)
    assert made.django == 1 and made.body == whole, url
    if browser.get(url).django == 1:
        assert browser.get(url).django == 0, url
    chunk, answer, statements, calls = first_chunk(browser, url)
    try:
        assert (statements, calls) == (1, 1), url
        assert whole.startswith(chunk) and 0 < len(chunk) <= head, url
        assert chunk + b"".join(answer[1]) == whole, url
    finally:
        answer[0].close()
    served = browser.get(url)
    assert served.django == 0 and served.body == whole, url
    return whole


@pytest.mark.parametrize("scheme", BENCHMARK_SCHEMES)
def test_every_download_longer_than_the_cap_is_served_again_as_its_head_and_rest_byte_for_byte(
    scheme: str, researcher: Browser, cast: Cast, settings: Any
) -> None:
    from annotation.changes import benchmark_changed

    benchmark, batch = scheme_benchmark(scheme, cast)
    # A chunk a row: a head of one chunk (the header's line), of several, and of all but the last.
    settings.CSV_DOWNLOAD_BATCH_ROWS = 1
    tried = 0
    for name, url in download_urls(benchmark, batch).items():
        whole = researcher.request("GET", url, django_only=True).body
        lines = whole.splitlines(keepends=True)
        if len(lines) < 2:  # a header alone (a scheme with no candidates): no head shorter than the body
            continue
        tried += 1
        last = len(whole) - len(lines[-1])
        for head in sorted({len(lines[0]), min(len(lines[0]) + len(lines[1]) + 1, last), last}):
            benchmark_changed(benchmark_id=benchmark.pk, target_ids=())  # the head kept before is not served
            assert over_the_cap(researcher, url, settings, head=head) == whole, (scheme, name, head)
    assert tried >= 4, scheme


@pytest.mark.parametrize("backend", ["local", "mturk", "prolific"])
def test_a_crowds_hits_csv_longer_than_the_cap_is_served_again_byte_for_byte(
    backend: str, researcher: Browser, cast: Cast, settings: Any
) -> None:
    from tests.crowds.crowd_helpers import SITE, make_batch, mturk_worker, publish_locally, submitted_assignment

    settings.SITE_URL = SITE
    settings.CSV_DOWNLOAD_BATCH_ROWS = 1
    batch = make_batch(name=f"crowd-{backend}", backend=backend, hits=3)
    if backend != "local":
        publish_locally(batch)
        hit = batch.hits.order_by("pk").first()
        assert hit is not None
        submitted_assignment(hit, mturk_worker("W1"), external_id="A1")
    url = f"/batches/{batch.pk}/hits.csv"
    whole = over_the_cap(researcher, url, settings, head=1000)
    assert whole.count(b"\n") == 4


def bob_submits(benchmark: Benchmark, cast: Cast) -> None:
    """Bob claims the benchmark's next HIT and submits it: new labels, the benchmark's key moved."""
    from annotation.models import Worker
    from hits.models import HITItem
    from hits.services import assignment_claim_next, assignment_submit
    from tests.scheme_benchmarks import scheme_answer

    assignment = assignment_claim_next(worker=Worker.objects.get(user=cast.bob), benchmark=benchmark)
    assert assignment is not None
    items = HITItem.objects.filter(hit_id=assignment.hit_id)
    assignment_submit(assignment=assignment, answers={item.pk: scheme_answer("swords", item) for item in items})


def test_a_download_served_from_its_head_shows_a_change_at_once(
    researcher: Browser, swords: tuple[Benchmark, Batch], cast: Cast, settings: Any
) -> None:
    benchmark, _ = swords
    settings.CSV_DOWNLOAD_BATCH_ROWS = 2
    url = f"/benchmarks/{benchmark.name}/data/labels.csv"
    before = over_the_cap(researcher, url, settings, head=200)
    bob_submits(benchmark, cast)
    after = researcher.get(url)
    assert after.django == 1 and after.body.count(b"\n") > before.count(b"\n")
    assert after.body == researcher.request("GET", url, django_only=True).body
    served = researcher.get(url)
    assert served.django == 0 and served.body == after.body
    # Nor is it served to another reader.
    other = Browser(make_user("otto", researcher=True))
    access_grant(benchmark=benchmark, user=cast.researcher, role=Role.OWNER, by=cast.researcher)
    for _ in range(3):
        refused = other.get(url)
        assert refused.django == 1 and refused.code == 404


def test_a_download_whose_data_changes_between_its_kept_head_and_its_rest_is_cut_short(
    researcher: Browser, swords: tuple[Benchmark, Batch], cast: Cast, settings: Any
) -> None:
    from crowdlex.kept_pages import KeptDownloadMoved

    benchmark, _ = swords
    settings.CSV_DOWNLOAD_BATCH_ROWS = 2
    # Sorted by the candidate, new labels fall among the rows the head holds: a rest made after
    # them would repeat or skip rows of the head's.
    url = f"/benchmarks/{benchmark.name}/data/labels.csv?sort=candidate"
    whole = over_the_cap(researcher, url, settings, head=200)
    head, (answer, chunks), _, _ = first_chunk(researcher, url)
    try:
        assert whole.startswith(head) and len(head) < len(whole)
        bob_submits(benchmark, cast)
        with pytest.raises(KeptDownloadMoved):
            next(chunks)
    finally:
        answer.close()
    # The next download is Django's, whole and of the data now.
    after = researcher.get(url)
    assert after.django == 1 and after.body == researcher.request("GET", url, django_only=True).body
    assert after.body != whole


def test_a_download_whose_first_chunk_is_longer_than_the_head_keeps_none(
    researcher: Browser, swords: tuple[Benchmark, Batch], settings: Any
) -> None:
    benchmark, _ = swords
    url = f"/benchmarks/{benchmark.name}/data/candidates.csv"
    whole = researcher.request("GET", url, django_only=True).body
    settings.KEPT_PAGE_MAX_BYTES = len(whole) - 1
    # The header's line alone is shorter than the head: a download whose first chunk is longer keeps none.
    settings.KEPT_PAGE_HEAD_BYTES = whole.index(b"\n")
    for _ in range(4):
        answer = researcher.get(url)
        assert answer.django == 1 and answer.body == whole


def test_a_download_found_longer_than_the_cap_reads_no_change_key_before_its_first_byte(
    researcher: Browser, swords: tuple[Benchmark, Batch], cast: Cast, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from analysis.browser import views
    from annotation.changes import benchmark_changed

    # A download that cannot be made again from a chunk on keeps no head (``kept_pages.Resumable``).
    monkeypatch.setattr(views, "resumable", lambda response, chunks: response)
    from annotation.models import Worker
    from hits.models import HITItem
    from hits.services import assignment_claim_next, assignment_submit
    from tests.scheme_benchmarks import scheme_answer

    benchmark, _ = swords
    url = f"/benchmarks/{benchmark.name}/data/candidates.csv"
    whole = researcher.request("GET", url, django_only=True).body
    settings.KEPT_PAGE_MAX_BYTES = len(whole) - 1
    settings.KEPT_PAGE_SECONDS = 2
    for _ in range(3):  # the CSRF cookie and the kept account filled, then the answer found too long
        assert researcher.get(url).body == whole
    with CaptureQueriesContext(connection) as alone:
        researcher.request("GET", url, django_only=True)
    calls: list[Any] = []
    with CaptureQueriesContext(connection) as layered, cache_calls_recorded(calls):
        answer = researcher.get(url)
    assert answer.django == 1 and answer.body == whole
    # The script alone (no answer written), and Django's statements with no change key before them.
    assert len(calls) == 1
    assert len(layered.captured_queries) == len(alone.captured_queries)
    assert not any("annotation_benchmarkchanges" in query["sql"].lower() for query in layered.captured_queries)

    # Still Django's answer, so what changed shows at once.
    assignment = assignment_claim_next(worker=Worker.objects.get(user=cast.bob), benchmark=benchmark)
    assert assignment is not None
    items = HITItem.objects.filter(hit_id=assignment.hit_id)
    assignment_submit(assignment=assignment, answers={item.pk: scheme_answer("swords", item) for item in items})
    after = researcher.get(url)
    assert after.django == 1 and after.body == researcher.request("GET", url, django_only=True).body
    assert after.body != whole

    # Under a cap it fits, at once: kept (what was remembered names the cap it was found over).
    settings.KEPT_PAGE_MAX_BYTES = 10 * len(after.body)
    assert kept_twice(researcher, url).body == after.body
    # Found too long again, then short enough once what was remembered is gone (KEPT_PAGE_SECONDS).
    settings.KEPT_PAGE_MAX_BYTES = len(after.body) - 1
    settings.KEPT_PAGE_SECONDS = 1
    benchmark_changed(benchmark_id=benchmark.pk, target_ids=())  # the kept answer is not served
    for _ in range(2):
        assert researcher.get(url).django == 1
    with CaptureQueriesContext(connection) as marked:
        researcher.get(url)
    assert len(marked.captured_queries) == len(alone.captured_queries)
    kept_pages._layer().max_bytes = len(after.body)  # type: ignore[union-attr]
    time.sleep(1.2)
    assert kept_twice(researcher, url).body == after.body


def test_a_streamed_answer_holds_no_more_than_the_cap_while_it_passes_through() -> None:
    kept: list[bytes] = []
    collected = kept_pages._Collected(iter([b"x" * 100] * 10), kept.append, 250)
    held = []
    for chunk in collected:
        assert chunk == b"x" * 100
        held.append(sum(map(len, collected.chunks or [])))
    assert held == [100, 200, 0, 0, 0, 0, 0, 0, 0, 0] and kept == []
    # At most the cap: kept once it ended.
    small = kept_pages._Collected(iter([b"ab", b"cd"]), kept.append, 4)
    assert b"".join(small) == b"abcd" and kept == [b"abcd"]


def test_a_longer_streamed_answer_keeps_its_head_once_it_ended_without_an_error() -> None:
    wholes: list[bytes] = []
    heads: list[tuple[bytes, int]] = []

    def keep_head(body: bytes, sent: int) -> None:
        heads.append((body, sent))

    chunks = [b"h" * 10, b"a" * 100, b"b" * 100, b"c" * 100]
    # (most bytes of the head, chunks kept): whole chunks only, at most the cap (250) however large.
    for most, sent in ((10, 1), (109, 1), (110, 2), (209, 2), (210, 3), (250, 3), (10_000, 3)):
        heads.clear()
        collected = kept_pages._Collected(iter(chunks), wholes.append, 250, keep_head=keep_head, head_bytes=most)
        assert b"".join(collected) == b"".join(chunks)
        assert heads == [(b"".join(chunks[:sent]), sent)], most
    # None shorter than the first chunk; none of a body that raised or that the server stopped reading.
    heads.clear()
    assert b"".join(kept_pages._Collected(iter(chunks), wholes.append, 250, keep_head=keep_head, head_bytes=9))
    assert heads == []

    def failing() -> Any:
        yield from chunks
        raise RuntimeError("the database went away")

    collected = kept_pages._Collected(failing(), wholes.append, 250, keep_head=keep_head, head_bytes=200)
    with pytest.raises(RuntimeError):
        b"".join(collected)
    stopped = iter(kept_pages._Collected(iter(chunks), wholes.append, 250, keep_head=keep_head, head_bytes=200))
    for _ in range(4):
        next(stopped)
    assert heads == [] and wholes == []


def test_a_download_a_label_or_a_data_change_moved_is_fresh(
    researcher: Browser, swords: tuple[Benchmark, Batch], cast: Cast
) -> None:
    from annotation.models import Worker
    from hits.models import HITItem
    from hits.services import assignment_claim_next, assignment_submit
    from tests.scheme_benchmarks import scheme_answer

    benchmark, batch = swords

    def submit() -> None:
        assignment = assignment_claim_next(worker=Worker.objects.get(user=cast.bob), benchmark=benchmark)
        assert assignment is not None
        items = HITItem.objects.filter(hit_id=assignment.hit_id)
        assignment_submit(assignment=assignment, answers={item.pk: scheme_answer("swords", item) for item in items})

    url = f"/benchmarks/{benchmark.name}/data/labels.csv"
    before = changed_after(researcher, url, submit)
    assert researcher.get(url).body.count(b"\n") > before.body.count(b"\n")

    def renamed() -> None:
        target = Target.objects.filter(benchmark=benchmark).order_by("pk").first()
        assert target is not None
        from annotation.changes import benchmark_changed

        Target.objects.filter(pk=target.pk).update(word="renamedword")
        benchmark_changed(benchmark_id=benchmark.pk, target_ids=[target.pk])

    items_url = f"/benchmarks/{benchmark.name}/data/items.csv"
    hits_url = f"/batches/{batch.pk}/hits.csv"
    kept_twice(researcher, hits_url)
    changed_after(researcher, items_url, renamed)
    assert b"renamedword" in researcher.get(items_url).body
    after = researcher.get(hits_url)
    assert after.django == 1 and b"renamedword" in after.body


def test_another_account_without_access_never_gets_a_kept_download(
    researcher: Browser, swords: tuple[Benchmark, Batch], cast: Cast
) -> None:
    benchmark, batch = swords
    # The benchmark has an owner: no other researcher sees it.
    access_grant(benchmark=benchmark, user=cast.researcher, role=Role.OWNER, by=cast.researcher)
    other = Browser(make_user("otto", researcher=True))
    annotator = Browser(cast.bob)
    for url in download_urls(benchmark, batch).values():
        kept = kept_twice(researcher, url)
        for _ in range(3):
            answer = other.get(url)
            assert answer.django == 1 and answer.code == 404, url
            assert answer.body != kept.body
            refused = annotator.get(url)
            assert refused.django == 1 and refused.code in (302, 403, 404), url


def test_a_download_that_fails_midway_is_not_kept(
    researcher: Browser, swords: tuple[Benchmark, Batch], monkeypatch: pytest.MonkeyPatch
) -> None:
    from analysis.browser import views

    benchmark, _ = swords
    url = f"/benchmarks/{benchmark.name}/data/items.csv"
    whole = researcher.request("GET", url, django_only=True).body
    original = views.csv_chunks

    def failing(*args: Any, **kwargs: Any) -> Any:
        chunks = original(*args, **kwargs)
        yield next(iter(chunks))
        raise RuntimeError("the database went away")

    monkeypatch.setattr(views, "csv_chunks", failing)
    for _ in range(3):
        with pytest.raises(RuntimeError):
            researcher.get(url)
    monkeypatch.setattr(views, "csv_chunks", original)
    answer = researcher.get(url)
    assert answer.django == 1 and answer.body == whole


def test_a_running_import_jobs_page_is_kept_and_shows_each_progress_write_at_once(
    researcher: Browser, swords: tuple[Benchmark, Batch], cast: Cast, settings: Any, tmp_path: Any
) -> None:
    from annotation.importers import jobs
    from annotation.importers.errors import ImportFailed

    settings.MEDIA_ROOT = str(tmp_path)
    benchmark, _ = swords
    job = jobs.import_job_create(upload=_upload(b"{}\n"), benchmark_name=benchmark.name, created_by=cast.researcher)
    url = f"/import-jobs/{job.pk}/"
    assert b"Waiting for a worker" in kept_twice(researcher, url).body
    seen: list[bytes] = []

    def importing(*, progress: Any, **kwargs: Any) -> Any:
        # The worker's import, its progress reported as it goes: the page follows each report.
        seen.append(kept_twice(researcher, url).body)
        for done in (3, 7, 12):
            progress(done, 12)
            shown = researcher.get(url)
            assert shown.django == 1, f"progress {done} hidden by the kept page"
            seen.append(kept_twice(researcher, url).body)
        raise ImportFailed("stopped here", file="words.jsonl")

    original = jobs.benchmark_import
    jobs.benchmark_import = importing  # type: ignore[assignment]
    try:
        jobs.import_job_run(job_id=job.pk)
    finally:
        jobs.benchmark_import = original  # type: ignore[assignment]
    assert b"0 targets imported so far" in seen[0]
    for done, body in zip((3, 7, 12), seen[1:], strict=True):
        assert f"{done} of 12 targets imported so far".encode() in body
    finished = researcher.get(url)
    assert finished.django == 1 and b"stopped here" in finished.body
