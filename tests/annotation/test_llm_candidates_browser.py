"""A researcher asks a language model for candidates from the benchmark page in a real browser: a dry
run first, then the run, followed on the job's page; the candidates appear on the target's page and
in the statistics' table of sources. The model is a local fake OpenAI-compatible endpoint."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from annotation.models import Benchmark, Candidate, Context, Target
from tests.annotation.fake_chat import FakeChat, fake_chat, substitutes
from tests.base import make_cast
from tests.browser import signed_in

# Playwright's sync API runs an event loop in this thread; the ORM calls around it are synchronous.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MODEL = "fake-model"


@pytest.fixture
def fake(settings: Any) -> Iterator[FakeChat]:
    with fake_chat() as server:
        settings.OPENAI_BASE_URL = server.base_url
        settings.LLM_MODEL = MODEL
        settings.LLM_REQUESTS_PER_MINUTE = 60_000
        server.default = lambda word: substitutes(f"{word}-like", f"very {word}")
        yield server


def test_a_researcher_asks_a_model_from_the_benchmark_page_and_sees_the_candidates(
    live_server: Any, browser: Any, fake: FakeChat
) -> None:
    cast = make_cast()
    benchmark = Benchmark.objects.create(name="llm-browser", scheme="swords")
    for text, word in (("A quick reply came.", "quick"), ("The bright sun rose.", "bright")):
        context = Context.objects.create(benchmark=benchmark, text=text)
        Target.objects.create(benchmark=benchmark, context=context, word=word, offset=text.index(word), pos="adj")
    page = signed_in(browser, live_server.url, cast.researcher).new_page()

    page.goto(f"{live_server.url}/benchmarks/{benchmark.name}/")
    form = page.locator("form[aria-labelledby=model-candidates]")
    assert form.locator("input[name=model]").input_value() == MODEL
    form.locator("input[name=per_target]").fill("2")
    form.get_by_role("button", name="Ask the model").click()
    page.wait_for_load_state()
    assert "dry run: nothing asked" in page.content() and fake.seen == []

    form = page.locator("form[aria-labelledby=model-candidates]")
    form.locator("input[name=per_target]").fill("2")
    form.get_by_label("Dry run").uncheck()
    form.get_by_role("button", name="Ask the model").click()
    page.wait_for_url("**/import-jobs/*/")
    page.get_by_text("2 targets asked, 2 answered, 0 failed").wait_for()

    assert set(Candidate.objects.filter(target__benchmark=benchmark).values_list("text", flat=True)) == {
        "quick-like",
        "very quick",
        "bright-like",
        "very bright",
    }
    page.goto(f"{live_server.url}/targets/{Target.objects.get(word='quick').pk}/")
    assert "quick-like" in page.content()
    page.goto(f"{live_server.url}/benchmarks/{benchmark.name}/statistics/")
    table = page.get_by_role("region", name="Candidate sources, table")
    assert f"llm:{MODEL}" in table.inner_text()
