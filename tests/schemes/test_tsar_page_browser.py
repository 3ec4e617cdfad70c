"""A small lexical simplification collection in a real browser (Playwright, Debian's chromium):
three annotators type simpler words for a Spanish sentence, the page marks the sentence and the
answer box with the benchmark's language and refuses the complex word itself, and the gold export
ranks their suggestions by count."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import pytest
from django.db import connections

from analysis.services import benchmark_export
from annotation.models import Benchmark, Context, Target
from hits.models import Answer
from hits.services import hits_generate
from tests.base import make_user
from tests.browser import log_in, signed_in

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SENTENCE = "¿Recuerdas la época pretérita de la ciudad, con su señorío?"
WORD = "pretérita"


def _suggest(browser: Any, base_url: str, username: str, typed: str, **device: Any) -> Any:
    page = log_in(browser, base_url, username, **device)
    page.click("button:has-text('Start working')")
    page.wait_for_url("**/work/assignments/*/")
    assert page.inner_text("mark.target >> nth=1") == WORD
    assert page.get_attribute(".context-text", "lang") == "es"
    assert page.get_attribute("#simplify-word", "lang") == "es"
    assert page.evaluate("document.activeElement.id") == "simplify-word"
    # Nothing scrolls sideways, on a phone too.
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    page.keyboard.type(typed)
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: "/work/assignments/" not in url)
    return page


def test_three_annotators_suggest_simpler_words_and_the_gold_ranks_them(live_server: Any, browser: Any) -> None:
    benchmark = Benchmark.objects.create(
        name="simple-es", scheme="tsar", language="es", scheme_settings={"annotators_per_instance": 3}
    )
    context = Context.objects.create(benchmark=benchmark, text=SENTENCE)
    Target.objects.create(
        context=context, benchmark=benchmark, word=WORD, lemma=WORD, offset=SENTENCE.index(WORD), pos=""
    )
    hits_generate(benchmark=benchmark, step=1, seed=1)
    for username in ("ana", "joao", "lucia"):
        make_user(username)

    # The first annotator tries the complex word itself, then nothing, before a simpler word.
    page = log_in(browser, live_server.url, "ana", viewport={"width": 1100, "height": 900})
    page.click("button:has-text('Start working')")
    page.wait_for_url("**/work/assignments/*/")
    assert "Escriba" in page.inner_text(".instructions")
    page.keyboard.type("Pretérita")
    page.keyboard.press("Enter")
    assert "highlighted word itself" in page.inner_text("#hit-error")
    page.fill("#simplify-word", "")
    page.click("#hit-submit")
    assert "Type one simpler word" in page.inner_text("#hit-error")
    page.fill("#simplify-word", "pasada")
    page.click("#hit-submit")
    page.wait_for_url(lambda url: "/work/assignments/" not in url)

    _suggest(browser, live_server.url, "joao", "histórica", viewport={"width": 1100, "height": 900})
    phone = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
    _suggest(browser, live_server.url, "lucia", "pasada", **phone)

    assert sorted(Answer.objects.values_list("data__substitute", flat=True)) == ["histórica", "pasada", "pasada"]
    out = io.StringIO()
    benchmark_export(benchmark=benchmark, format="tsar", out=out)
    assert out.getvalue() == f"{SENTENCE}\t{WORD}\tpasada\tpasada\thistórica\n"
    connections.close_all()


AXE = Path(__file__).resolve().parent.parent / "browser_assets" / "node_modules" / "axe-core" / "axe.min.js"


def test_the_spanish_page_has_no_serious_accessibility_violation_on_a_phone(live_server: Any, browser: Any) -> None:
    if not AXE.exists():
        pytest.fail(f"axe-core is not installed at {AXE}: make browser-assets")
    benchmark = Benchmark.objects.create(name="simple-a11y", scheme="tsar", language="es")
    context = Context.objects.create(benchmark=benchmark, text=SENTENCE)
    Target.objects.create(
        context=context, benchmark=benchmark, word=WORD, lemma=WORD, offset=SENTENCE.index(WORD), pos=""
    )
    hits_generate(benchmark=benchmark, step=1, seed=1)
    user = make_user("ana")
    page = signed_in(
        browser, live_server.url, user, bypass_csp=True, viewport={"width": 390, "height": 844}, is_mobile=True
    ).new_page()
    page.goto(f"{live_server.url}/work/")
    page.click("button:has-text('Start working')")
    page.wait_for_url("**/work/assignments/*/")
    page.add_script_tag(path=str(AXE))
    results = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    serious = [violation["id"] for violation in results["violations"] if violation["impact"] in {"serious", "critical"}]
    assert serious == []
    connections.close_all()
