"""Candidates from a language model, asked of a local fake OpenAI-compatible endpoint started by
each test (``fake_chat``): what is stored and with what provenance, de-duplication, several targets
in flight, retries and Retry-After, resumption after a failure, the dry run, bad answers, the
scheme's prompts and the command."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from annotation.llm import answer_parse, prompt_sha256, retry_after_seconds
from annotation.models import Activity, Benchmark, Candidate, Context, Import, Target
from annotation.services import ModelReport, ModelRequest, candidates_add
from tests.annotation.fake_chat import FakeChat, Reply, fake_chat, substitutes
from tests.base import Cast

MODEL = "fake-model"
ORIGIN = f"llm:{MODEL}"
KEY = "sk-test-secret-key"


@pytest.fixture
def fake(settings: Any) -> Iterator[FakeChat]:
    with fake_chat() as server:
        settings.OPENAI_BASE_URL = server.base_url
        settings.OPENAI_API_KEY = KEY
        settings.LLM_BACKOFF_SECONDS = 0.01
        settings.LLM_BACKOFF_MAX_SECONDS = 5
        settings.LLM_REQUESTS_PER_MINUTE = 60_000
        settings.LLM_MAX_ATTEMPTS = 3
        settings.LLM_CONCURRENCY = 4
        yield server


def _benchmark(name: str = "llm", *, scheme: str = "swords", language: str = "en", words: int = 3) -> Benchmark:
    benchmark = Benchmark.objects.create(name=name, scheme=scheme, language=language)
    texts = [
        "A quick reply came.",
        "The bright sun rose.",
        "He ran home fast.",
        "A tall tree fell.",
        "The old man sat.",
    ]
    spots = [("quick", "adj"), ("bright", "adj"), ("ran", "verb"), ("tall", "adj"), ("old", "adj")]
    for text, (word, pos) in list(zip(texts, spots, strict=True))[:words]:
        context = Context.objects.create(benchmark=benchmark, text=text)
        Target.objects.create(benchmark=benchmark, context=context, word=word, offset=text.index(word), pos=pos)
    return benchmark


def _run(benchmark: Benchmark, **kwargs: Any) -> ModelReport:
    targets = kwargs.pop("targets", None)
    dry_run = kwargs.pop("dry_run", False)
    report = candidates_add(
        benchmark=benchmark,
        source="llm",
        targets=targets,
        model=ModelRequest(model=kwargs.pop("model", MODEL), **kwargs),
        dry_run=dry_run,
    )
    assert isinstance(report, ModelReport)
    return report


@pytest.mark.django_db
def test_each_substitute_is_stored_with_its_source_and_the_run_keeps_its_provenance(fake: FakeChat, cast: Cast) -> None:
    benchmark = _benchmark(words=1)
    quick = Target.objects.get(word="quick")
    Candidate.objects.create(target=quick, text="fast", sources=["coinco"])
    # The target itself, a repeat in another case, and a known candidate, beside two new ones.
    fake.script("quick", substitutes("speedy", "Fast", "quick", "rapid", "SPEEDY"))

    report = candidates_add(
        benchmark=benchmark,
        source="llm",
        model=ModelRequest(model=MODEL, per_target=5, temperature=0.2),
        created_by=cast.researcher,
    )

    assert isinstance(report, ModelReport)
    found = {c.text: c for c in quick.candidates.all()}
    assert sorted(found) == ["fast", "rapid", "speedy"]
    assert found["fast"].sources == ["coinco", ORIGIN]
    assert found["speedy"].sources == [ORIGIN]
    assert found["speedy"].extra["llm"] == {
        "model": MODEL,
        "prompt_sha256": report.prompt_sha256,
        "rank": 1,
        "raw": "speedy",
    }
    assert found["rapid"].extra["llm"]["rank"] == 3
    assert (report.candidates_created, report.candidates_existing) == (2, 1)
    assert (report.target_itself, report.repeated, report.answered, report.failed) == (1, 1, 1, 0)

    record = Import.objects.get(benchmark=benchmark, origin=ORIGIN)
    assert set(record.candidates.values_list("text", flat=True)) == {"fast", "rapid", "speedy"}
    provenance = record.provenance
    assert provenance["endpoint"] == fake.base_url
    assert provenance["model"] == MODEL
    entry = provenance["prompts"][report.prompt_sha256]
    assert prompt_sha256(entry["prompt"]) == report.prompt_sha256
    assert "{marked_context}" in entry["prompt"]
    assert (entry["temperature"], entry["per_target"], entry["by"]) == (0.2, 5, cast.researcher.username)
    assert entry["targets"] == [quick.pk] and entry["first_at"]
    # The key went to the endpoint as a bearer token and is kept nowhere.
    assert fake.seen[0].authorization == f"Bearer {KEY}"
    assert KEY not in json.dumps(provenance) and KEY not in json.dumps(report.as_dict())
    body = fake.seen[0].body
    assert (body["model"], body["temperature"]) == (MODEL, 0.2)
    assert "A quick reply came." in body["messages"][1]["content"]
    assert Activity.objects.filter(benchmark=benchmark, summary__contains=ORIGIN).count() == 1


@pytest.mark.django_db
def test_several_targets_are_in_flight_at_once_and_never_more_than_the_setting(fake: FakeChat, settings: Any) -> None:
    settings.LLM_CONCURRENCY = 3
    benchmark = _benchmark(words=5)
    fake.default = lambda word: Reply(content=json.dumps([f"{word}-like"]), delay=0.4)

    report = _run(benchmark)

    assert report.answered == 5
    assert 2 <= fake.most_in_flight <= 3
    assert Candidate.objects.filter(target__benchmark=benchmark, sources=[ORIGIN]).count() == 5


@pytest.mark.django_db
def test_a_throttled_request_waits_its_retry_after_and_a_server_error_backs_off(fake: FakeChat) -> None:
    benchmark = _benchmark(words=2)
    fake.script("quick", Reply(status=429, headers={"Retry-After": "1"}), substitutes("speedy"))
    fake.script("bright", Reply(status=503), Reply(status=502), substitutes("shiny"))

    report = _run(benchmark)

    quick_times = [seen.at for seen in fake.seen if seen.word == "quick"]
    assert len(quick_times) == 2 and quick_times[1] - quick_times[0] >= 0.95
    assert fake.asked("bright") == 3
    assert (report.answered, report.failed, report.retries) == (2, 0, 3)
    assert set(Candidate.objects.filter(target__benchmark=benchmark).values_list("text", flat=True)) == {
        "speedy",
        "shiny",
    }


def test_retry_after_is_read_as_seconds_or_as_an_http_date() -> None:
    assert retry_after_seconds("7") == 7.0
    assert retry_after_seconds(None) is None
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0


@pytest.mark.django_db
def test_a_run_that_failed_half_way_keeps_what_it_stored_and_a_rerun_asks_only_the_rest(fake: FakeChat) -> None:
    benchmark = _benchmark(words=3)
    fake.script("bright", Reply(status=500))
    fake.default = lambda word: substitutes(f"{word}ish")

    first = _run(benchmark)

    assert (first.answered, first.failed) == (2, 1)
    assert "bright" in first.failures[0] and "HTTP 500" in first.failures[0] and "after 3 attempts" in first.failures[0]
    assert "run it again" in first.summary()
    assert set(Candidate.objects.filter(target__benchmark=benchmark).values_list("text", flat=True)) == {
        "quickish",
        "ranish",
    }
    fake.replies.clear()

    second = _run(benchmark)

    assert (fake.asked("quick"), fake.asked("ran"), fake.asked("bright")) == (1, 1, 4)
    assert (second.already_asked, second.answered, second.candidates_created) == (2, 1, 1)
    third = _run(benchmark)
    assert (third.already_asked, third.asked) == (3, 0)
    # Another prompt is another question: the same targets are asked again under it.
    other = _run(benchmark, prompt="Words for **{target}** in: {context}. {count} of them.", targets=["quick"])
    assert (other.already_asked, other.answered) == (0, 1)
    entries = Import.objects.get(origin=ORIGIN).provenance["prompts"]
    assert len(entries) == 2


@pytest.mark.django_db
def test_a_wrong_key_stops_the_run_at_once_and_keeps_nothing_half_done(fake: FakeChat, settings: Any) -> None:
    settings.LLM_CONCURRENCY = 1
    benchmark = _benchmark(words=3)
    fake.default = lambda word: Reply(status=401)

    report = _run(benchmark)

    assert len(fake.seen) == 1
    assert report.stopped and "HTTP 401" in report.stopped
    assert report.answered == 0 and not Candidate.objects.exists()


@pytest.mark.django_db
def test_a_dry_run_asks_nothing_and_shows_the_first_prompt_and_an_estimate(fake: FakeChat, settings: Any) -> None:
    settings.LLM_PRICE_PER_1K_INPUT_TOKENS = Decimal("0.5")
    settings.LLM_PRICE_PER_1K_OUTPUT_TOKENS = Decimal("1.5")
    benchmark = _benchmark(words=2)

    report = _run(benchmark, dry_run=True, per_target=10)

    assert fake.seen == []
    assert not Import.objects.exists()
    assert "A **quick** reply came." in report.first_prompt
    # Two targets: 12 + 6 x 10 tokens of answer each; the prompts by four characters a token.
    assert report.estimated_completion_tokens == 2 * (12 + 60)
    assert report.estimated_prompt_tokens > 0
    expected = Decimal("0.5") * report.estimated_prompt_tokens / 1000 + Decimal("1.5") * 144 / 1000
    assert report.estimated_cost == str(expected.quantize(Decimal("0.0001")))
    assert "nothing asked" in report.summary() and "A **quick** reply came." in report.summary()


@pytest.mark.django_db
def test_bad_answers_are_reported_naming_the_target_and_the_good_items_kept(fake: FakeChat) -> None:
    benchmark = _benchmark(words=2)
    fake.script("quick", substitutes("", "42", "swift", "x" * 120))
    fake.script("bright", Reply(content="I am sorry, but I cannot help with requests of this kind today."))

    report = _run(benchmark)

    # Three items of the first answer; the second is prose, so it holds no substitute at all.
    assert report.unusable_count == 5
    said = "\n".join(report.unusable)
    assert said.count("target") == 5 and said.count("'quick'") == 3 and said.count("'bright'") == 2
    assert "no word in it" in said and "longer than 100 characters" in said
    assert "a sentence, not a list of substitutes" in said
    assert "the answer held no usable substitute" in said
    assert list(Candidate.objects.filter(target__benchmark=benchmark).values_list("text", flat=True)) == ["swift"]
    # A target answered badly still counts as asked: a rerun does not pay for it again.
    assert _run(benchmark).asked == 0


def test_answers_are_read_from_json_fenced_json_or_a_list() -> None:
    fenced = 'Here you go:\n```json\n{"substitutes": ["swift", {"word": "rapid"}, ["fast", 0.9]]}\n```'
    assert [text for text, _ in answer_parse(fenced, target="quick", count=10).substitutes] == [
        "swift",
        "rapid",
        "fast",
    ]
    numbered = '1. Swift\n2) rapid.\n- "speedy"\n'
    parsed = answer_parse(numbered, target="quick", count=2)
    assert [text for text, _ in parsed.substitutes] == ["Swift", "rapid"]
    assert (parsed.format, parsed.beyond_count) == ("list", 1)
    assert [text for text, _ in answer_parse("swift, rapid; fast", target="quick", count=10).substitutes] == [
        "swift",
        "rapid",
        "fast",
    ]
    assert [text for text, _ in answer_parse('["swift", "quick"]', target="Quick", count=10).substitutes] == ["swift"]


@pytest.mark.django_db
def test_each_scheme_asks_in_its_own_words_and_a_scheme_of_sentences_refuses(fake: FakeChat) -> None:
    prolex = _benchmark("pl", scheme="prolex", words=1)
    tsar = _benchmark("ts", scheme="tsar", language="es", words=1)
    sws = _benchmark("sw", scheme="sws", words=1)

    assert "proficiency" in _run(prolex, dry_run=True).first_prompt
    assert "CEFR" in _run(prolex, dry_run=True).first_prompt
    simpler = _run(tsar, dry_run=True).first_prompt
    assert "simpler" in simpler and "in Spanish" in simpler
    with pytest.raises(ValueError, match="takes no candidates from a language model: its annotators mark"):
        _run(sws, dry_run=True)
    assert fake.seen == []


@pytest.mark.django_db
def test_the_command_asks_with_a_prompt_file_and_names_a_bad_placeholder_by_file_and_line(
    fake: FakeChat, tmp_path: Path
) -> None:
    benchmark = _benchmark(words=2)
    good = tmp_path / "prompt.txt"
    good.write_text("Give {count} substitutes for **{target}** in: {context}", encoding="utf-8")
    bad = tmp_path / "bad.txt"
    bad.write_text("Line one\nGive {number} substitutes for {target}", encoding="utf-8")
    fake.default = lambda word: substitutes(f"{word}-ish")
    out = StringIO()

    call_command(
        "candidates_add", benchmark.name, "--source", "llm", "--model", MODEL, "--prompt", str(good), "--json",
        "--targets", "quick", "--per-target", "3", stdout=out,
    )  # fmt: skip

    found = json.loads(out.getvalue())
    assert (found["answered"], found["candidates_created"], found["per_target"]) == (1, 1, 3)
    assert fake.seen[0].body["messages"][1]["content"] == "Give 3 substitutes for **quick** in: A quick reply came."
    with pytest.raises(CommandError, match=r"bad\.txt, line 2: unknown placeholder \{number\}"):
        call_command("candidates_add", benchmark.name, "--source", "llm", "--model", MODEL, "--prompt", str(bad))
    with pytest.raises(CommandError, match="are for --source llm"):
        call_command("candidates_add", benchmark.name, "--source", "wordnet", "--model", MODEL)
    with pytest.raises(CommandError, match="name the model"):
        call_command("candidates_add", benchmark.name, "--source", "llm")
    assert len(fake.seen) == 1


@pytest.mark.django_db
def test_a_run_stopped_while_storing_keeps_the_targets_it_stored_and_asks_nothing_more(
    fake: FakeChat, settings: Any
) -> None:
    settings.LLM_CONCURRENCY = 1
    benchmark = _benchmark(words=4)
    fake.default = lambda word: Reply(content=json.dumps([f"{word}ish"]), delay=0.5)

    def stop_after_the_first(done: int, total: int) -> None:
        if done == 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        candidates_add(
            benchmark=benchmark, source="llm", model=ModelRequest(model=MODEL), progress=stop_after_the_first
        )

    # The first target is kept; the one in flight then was asked besides, unread, and not the last.
    assert list(Candidate.objects.filter(target__benchmark=benchmark).values_list("text", flat=True)) == ["quickish"]
    assert fake.asked("tall") == 0
    stored = Import.objects.get(origin=ORIGIN).provenance["prompts"]
    assert [entry["targets"] for entry in stored.values()] == [[Target.objects.get(word="quick").pk]]
    resumed = _run(benchmark)
    assert (resumed.already_asked, resumed.answered, fake.asked("quick")) == (1, 3, 1)


def test_the_rate_limiter_spaces_the_starts_of_requests() -> None:
    import time

    from annotation.llm.client import RateLimiter

    limiter = RateLimiter(600)  # one start every 0.1 s
    started = time.monotonic()
    for _ in range(5):
        limiter.wait()
    assert time.monotonic() - started >= 0.39
