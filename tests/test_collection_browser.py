"""A whole collection per scheme, from an empty database, through the pages only (Playwright, Debian's
chromium): a researcher creates a benchmark, imports a small file and opens a batch; annotators, each
in a browser of their own, find the project on their home page and answer with the keyboard or the
mouse until no work is left for them; the researcher then reads a HIT's answers, the pipeline and the
statistics, and downloads the raw answers and the scheme's release, whose content the test checks
against what the annotators submitted.

Only the accounts (and their group) are made in code, as the suite's cast is."""

from __future__ import annotations

import csv
import io
import json
import os
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import pytest
from django.db import connections

from tests.base import make_user
from tests.browser import log_in, wait_until

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DESKTOP = {"viewport": {"width": 1200, "height": 900}}


# --- shared helpers ---------------------------------------------------------------------------


@dataclass
class Submission:
    """What one annotator handed in for one HIT, as the page showed and recorded it."""

    username: str
    assignment_id: int
    target: str
    # Choice schemes: (row text, value) in the order of the rows.
    rows: list[tuple[str, str]] = field(default_factory=list)
    # Smart Word Suggestions: the targets as the annotator marked them.
    marks: list[Mark] = field(default_factory=list)


@dataclass(frozen=True)
class Mark:
    """A Smart Word Suggestions target: tokens [start, end), its text, suggestions and type."""

    start: int
    end: int
    text: str
    suggestions: tuple[str, ...]
    type: str


@pytest.fixture
def researcher_page(browser: Any, live_server: Any) -> Iterator[Any]:
    make_user("rita", researcher=True)
    page = log_in(browser, live_server.url, "rita", **DESKTOP)
    yield page
    page.context.close()
    connections.close_all()


def _no_server_error(response: Any) -> Any:
    assert response is not None and response.status < 500, f"{response.url} answered {response.status}"
    return response


def create_benchmark(page: Any, base_url: str, *, name: str, title: str, scheme: str) -> None:
    """The benchmark list's form; it leads to the import page."""
    _no_server_error(page.goto(f"{base_url}/benchmarks/"))
    page.fill("#id_name", name)
    page.fill("#id_title", title)
    page.select_option("#id_scheme", scheme)
    page.click("button:has-text('Create')")
    page.wait_for_url(f"**/benchmarks/{name}/import/")


def import_file(page: Any, base_url: str, *, name: str, path: Path, targets: int) -> None:
    """The import page, reached from the benchmark's page, hands the file to an import job whose page
    shows its report (reloading itself while it runs); the benchmark's page then lists the import."""
    _no_server_error(page.goto(f"{base_url}/benchmarks/{name}/"))
    page.click("a:has-text('Import a file')")
    page.wait_for_url(f"**/benchmarks/{name}/import/")
    page.set_input_files("#id_file", str(path))
    with page.expect_navigation():
        page.click("button:has-text('Import')")
    assert "/import-jobs/" in page.url, page.locator(".error").all_inner_texts()
    page.wait_for_selector("#import-job[data-status='done'], #import-job[data-status='failed']", timeout=30_000)
    assert page.locator("#import-job").get_attribute("data-status") == "done", page.inner_text("main")
    assert f"{targets} targets" in page.inner_text("#import-job-report")
    with page.expect_navigation():
        page.click(f"a:has-text('Open {name}')")
    assert page.url.endswith(f"/benchmarks/{name}/")
    imported = page.locator("#imports tbody tr", has_text=path.name)
    assert imported.count() == 1, page.inner_text("main")
    assert imported.locator("td").nth(2).inner_text() == str(targets)


def create_batch(page: Any, base_url: str, *, name: str, annotators: Sequence[str] = (), overlap: int = 0) -> int:
    """The batch form, reached from the benchmark's page; returns the new batch's id, whose page it opens."""
    _no_server_error(page.goto(f"{base_url}/benchmarks/{name}/"))
    page.click("a:has-text('Create a batch')")
    page.wait_for_url(f"**/benchmarks/{name}/batches/**")
    if annotators:
        page.select_option("#id_annotators", list(annotators))
        page.fill("#id_overlap", str(overlap))
    page.click("button:has-text('Generate HITs')")
    page.wait_for_url(re.compile(r".*/batches/\d+/$"))
    batch_id = int(page.url.rstrip("/").rsplit("/", 1)[1])
    assert "created with" in page.inner_text("main")
    assert page.locator("h1 .badge").inner_text() == "open"
    return batch_id


def work_until_done(
    browser: Any,
    base_url: str,
    username: str,
    *,
    project: str,
    summary: str,
    answer: Callable[[Any, Submission], None],
) -> list[Submission]:
    """Log in as ``username``, find ``project`` on the work home, press its Start and answer every HIT
    the queue gives (``answer`` fills the page and records what it chose); then the home offers
    nothing more."""
    page = log_in(browser, base_url, username, **DESKTOP)
    _no_server_error(page.goto(f"{base_url}/work/"))
    card = page.locator(".project", has=page.locator(".project-title", has_text=project))
    assert card.count() == 1, page.inner_text("main")
    assert summary in card.inner_text()
    card.get_by_role("button", name=f"Start “{project}”").click()
    submissions: list[Submission] = []
    while True:
        page.wait_for_url(re.compile(r".*/work/assignments/\d+/$"))
        url = page.url
        assignment_id = int(url.rstrip("/").rsplit("/", 1)[1])
        assert page.inner_text("#hit-project") == f"Project: {project}"
        # A choice scheme's question names the target; a sentence to mark has none.
        marked = page.locator("#hit-question mark.target")
        submission = Submission(username, assignment_id, marked.inner_text() if marked.count() else "")
        answer(page, submission)
        submissions.append(submission)
        page.wait_for_url(lambda current, before=url: current != before)
        if "/work/assignments/" not in page.url:
            break
        assert len(submissions) < 10, "the queue keeps handing out HITs"
    _no_server_error(page.goto(f"{base_url}/work/"))
    assert page.locator(".project").count() == 0, page.inner_text("main")
    assert page.locator("#no-projects").is_visible()
    page.context.close()
    return submissions


def answer_rows(page: Any, submission: Submission, choose: Callable[[str], str], keys: dict[str, str] | None) -> None:
    """Answer a choice scheme's rows: each row's value is ``choose(row text)``, typed with ``keys``
    (value -> key) or, without keys, clicked; the last answer moves the focus to Submit, where Enter
    (keyboard) or a click (mouse) submits."""
    # The page's script puts the focus on the first row once it has run.
    wait_until(page, "document.activeElement && document.activeElement.classList.contains('item')")
    rows = page.locator("li.item")
    for index in range(rows.count()):
        row = rows.nth(index)
        text = row.get_attribute("data-text")
        value = choose(text)
        if keys is None:
            row.locator(f"input[value='{value}']").click()
        else:
            page.keyboard.press(keys[value])
        submission.rows.append((text, value))
    if keys is None:
        page.click("#hit-submit")
    else:
        assert page.evaluate("document.activeElement.id") == "hit-submit"
        page.keyboard.press("Enter")


def open_hit_of(page: Any, base_url: str, batch_id: int, target: str) -> None:
    """From the batch's page, which counts every HIT complete, the page of the HIT of ``target``."""
    _no_server_error(page.goto(f"{base_url}/batches/{batch_id}/"))
    table = page.get_by_role("region", name="HITs", exact=True).locator("table tbody tr")
    hits = table.count()
    assert page.inner_text("[data-live='batch.hits']") == f"{hits} / {hits}"
    assert table.locator(".badge.ok", has_text="complete").count() == hits
    word = page.locator("td:nth-child(2) a", has_text=re.compile(f"^{re.escape(target)}$"))
    row = table.filter(has=word)
    row.locator("td:first-child a").click()
    page.wait_for_url(re.compile(r".*/hits/\d+/$"))


def answers_on_hit_page(page: Any) -> dict[str, dict[str, Any]]:
    """The HIT page's table: per worker column, each item's text -> the answer cell (a locator)."""
    answers = page.locator("table").first
    workers = [header.split("\n")[0].strip() for header in answers.locator("thead th").all_inner_texts()[3:]]
    table: dict[str, dict[str, Any]] = {worker: {} for worker in workers}
    rows = answers.locator("tbody tr")
    for index in range(rows.count()):
        cells = rows.nth(index).locator("td")
        text = cells.nth(1).inner_text()
        for column, worker in enumerate(workers):
            table[worker][text] = cells.nth(3 + column)
    return table


def check_pipeline(
    page: Any,
    base_url: str,
    name: str,
    *,
    collected: dict[int, str],
    stages: dict[str, str],
    foreign: tuple[str, ...],
    finished: bool,
) -> None:
    """The pipeline page counts the work of each step (``collected``: step -> "collected / needed"),
    names each target's stage in the scheme's words (``stages``: word -> name) and none of another
    scheme's (``foreign``), and says whether the pipeline is finished."""
    _no_server_error(page.goto(f"{base_url}/benchmarks/{name}/"))
    page.click("a:has-text('Progress per target')")
    page.wait_for_url(f"**/benchmarks/{name}/pipeline/")
    assert {step: page.inner_text(f"[data-live='step{step}.labels']") for step in collected} == collected
    shown = {
        row.locator("td").first.locator("strong").inner_text(): row.locator("td:nth-child(3) .badge").inner_text()
        for row in page.locator("table").last.locator("tbody tr").all()
    }
    assert shown == stages, page.inner_text("main")
    text = page.inner_text("main")
    for word in foreign:
        assert word not in text
    assert page.locator("h1 .badge", has_text="finished").count() == int(finished)


def check_statistics(page: Any, base_url: str, name: str, figures: dict[str, str]) -> None:
    """The statistics page, reached from the benchmark's page: each figure (a card's label -> its
    value as shown), and every plot drawn as SVG with marks in it."""
    _no_server_error(page.goto(f"{base_url}/benchmarks/{name}/"))
    page.click("a:has-text('Statistics, agreement and plots')")
    page.wait_for_url(f"**/benchmarks/{name}/statistics/")
    shown = page.evaluate(
        """() => Object.fromEntries(Array.from(document.querySelectorAll("main .stat")).map((stat) =>
             [stat.previousElementSibling ? stat.previousElementSibling.textContent.trim() : "",
              stat.textContent.trim()]))"""
    )
    assert {label: shown.get(label) for label in figures} == figures
    plots = page.locator("main svg")
    assert plots.count() >= 1
    for index in range(plots.count()):
        plot = plots.nth(index)
        assert plot.bounding_box()["height"] > 50
        assert plot.locator("rect, path, line").count() > 3
    # Each plot's files, as its links give them.
    links = page.locator(".plot-downloads a").all()
    assert len(links) == 2 * plots.count()
    for link in links:
        response = page.request.get(urljoin(page.url, link.get_attribute("href")))
        assert response.status == 200, link.get_attribute("href")
        body = response.body()
        assert body.startswith(b"\x89PNG") or b"<svg" in body[:500]


def table_of(page: Any, heading: str) -> dict[str, list[str]]:
    """The first table after the heading ``heading``: each row's first cell -> its other cells."""
    section = page.locator("main section", has=page.get_by_role("heading", name=heading, exact=True))
    rows: dict[str, list[str]] = {}
    for row in section.locator("tbody tr").all():
        cells = [cell.strip() for cell in row.locator("td").all_inner_texts()]
        rows[cells[0]] = cells[1:]
    return rows


def download(page: Any, base_url: str, name: str, format: str) -> str:
    """A format's direct download from the exports page (reached from the benchmark's page), as text."""
    _no_server_error(page.goto(f"{base_url}/benchmarks/{name}/"))
    page.click("a:has-text('Exports')")
    page.wait_for_url(f"**/benchmarks/{name}/exports/")
    # Every format the page offers to download now answers, whether or not the test reads it.
    for offered in page.locator("a[href$='/download']").all():
        response = page.request.get(urljoin(page.url, offered.get_attribute("href")))
        assert response.status == 200 and response.body(), offered.get_attribute("href")
    link = page.locator(f"a[href$='/exports/{format}/download']")
    assert link.count() == 1, f"no download link for {format}"
    with page.expect_download() as info:
        link.click()
    path = info.value.path()
    assert path is not None, info.value.failure()
    return Path(path).read_text(encoding="utf-8")


def answer_csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def by_assignment(rows: list[dict[str, str]]) -> dict[int, list[dict[str, str]]]:
    grouped: dict[int, list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        grouped[int(row["assignment_id"])].append(row)
    return {key: sorted(value, key=lambda row: int(row["item_position"])) for key, value in grouped.items()}


# --- SWORDS -------------------------------------------------------------------------------------

SWORDS_TARGETS = [
    {
        "context": "The river was calm after the storm.",
        "target": "calm",
        "offset": 14,
        "pos": "adj",
        "lemma": "calm",
        "candidates": [{"text": "still", "sources": ["coinco"]}, "quiet", "peaceful"],
    },
    {
        "context": "She will address the letter to her aunt.",
        "target": "address",
        "offset": 9,
        "pos": "verb",
        "lemma": "address",
        "candidates": ["send", "direct", {"text": "speak", "sources": ["thesaurus"]}],
    },
]
SWORDS_CANDIDATES = {"calm": {"still", "quiet", "peaceful"}, "address": {"send", "direct", "speak"}}
# Each annotator's judgments of the candidates (a person's; the controls are answered as a person would).
SWORDS_JUDGMENTS = {
    "alice": {"still": "accept", "quiet": "accept", "peaceful": "accept", "send": "accept", "direct": "accept",
              "speak": "reject"},
    "bob": {"still": "accept", "quiet": "reject", "peaceful": "accept", "send": "reject", "direct": "accept",
            "speak": "abstain"},
    "carol": {"still": "accept", "quiet": "reject", "peaceful": "reject", "send": "accept", "direct": "reject",
              "speak": "reject"},
}  # fmt: skip
SWORDS_KEYS = {
    "alice": {"accept": "1", "reject": "2", "abstain": "3"},
    "bob": {"accept": "a", "reject": "r", "abstain": "s"},
    "carol": None,  # the mouse
}


def test_a_swords_collection_from_an_empty_database(
    live_server: Any, browser: Any, researcher_page: Any, tmp_path: Path
) -> None:
    base, page = live_server.url, researcher_page
    for username in SWORDS_JUDGMENTS:
        make_user(username)
    path = tmp_path / "substitutes.jsonl"
    path.write_text("".join(json.dumps(target) + "\n" for target in SWORDS_TARGETS), encoding="utf-8")

    create_benchmark(page, base, name="rivers", title="Words in context", scheme="swords")
    import_file(page, base, name="rivers", path=path, targets=2)
    batch_id = create_batch(page, base, name="rivers")
    # One HIT per target (three candidates each).
    assert page.get_by_role("region", name="HITs", exact=True).locator("table tbody tr").count() == 2

    submitted: list[Submission] = []
    for username, judgments in SWORDS_JUDGMENTS.items():

        def answer(
            hit: Any, submission: Submission, judgments: dict[str, str] = judgments, who: str = username
        ) -> None:
            def choose(text: str) -> str:
                if text in SWORDS_CANDIDATES[submission.target]:
                    return judgments[text]
                # The target itself is always acceptable; the other row is a word that does not fit.
                return "accept" if text == submission.target else "reject"

            answer_rows(hit, submission, choose, SWORDS_KEYS[who])

        submitted += work_until_done(
            browser,
            base,
            username,
            project="Words in context",
            summary="Judge about a dozen substitutes",
            answer=answer,
        )
    assert Counter(s.username for s in submitted) == {"alice": 2, "bob": 2, "carol": 2}
    for submission in submitted:
        texts = [text for text, _ in submission.rows]
        assert len(texts) == 5 and SWORDS_CANDIDATES[submission.target] < set(texts)
        assert submission.target in texts

    # The HIT of "calm" shows each annotator's answers as submitted.
    open_hit_of(page, base, batch_id, "calm")
    table = answers_on_hit_page(page)
    assert sorted(table) == ["alice", "bob", "carol"]
    for submission in (s for s in submitted if s.target == "calm"):
        for text, value in submission.rows:
            assert table[submission.username][text].locator("[data-answer]").get_attribute("data-answer") == value
            assert table[submission.username][text].inner_text().strip().lower() == value

    # What the annotators chose for each candidate, in the order they submitted.
    chosen: dict[tuple[str, str], list[str]] = defaultdict(list)
    for submission in submitted:
        for text, value in submission.rows:
            if text in SWORDS_CANDIDATES[submission.target]:
                chosen[(submission.target, text)].append(value)
    scores = {key: values.count("accept") / len(values) for key, values in chosen.items()}
    assert scores == {
        ("calm", "still"): 1.0,
        ("calm", "quiet"): 1 / 3,
        ("calm", "peaceful"): 2 / 3,
        ("address", "send"): 2 / 3,
        ("address", "direct"): 2 / 3,
        ("address", "speak"): 0.0,
    }

    # Every candidate has its three step-2 labels: "speak" (no accept) is dropped, the rest go on to step 3.
    labels = sum(len(values) for values in chosen.values())
    survivors = sum(score > 0 for score in scores.values())
    check_pipeline(
        page,
        base,
        "rivers",
        collected={2: f"{labels} / {labels}", 3: f"0 / {7 * survivors}"},
        stages={"calm": "step 3: score", "address": "step 3: score"},
        foreign=("being judged",),
        finished=False,
    )
    check_statistics(page, base, "rivers", {"Contexts": "2", "Targets": "2", "Candidates": "6", "Labels": str(labels)})
    abstains = sum(values.count("abstain") for values in chosen.values())
    assert f"abstain share {abstains / labels:.4f}" in page.inner_text("main")
    per_target = table_of(page, "Per target (SWORDS Table 2)")
    for category, count in (
        ("acceptable", sum(score > 0.5 for score in scores.values())),
        ("conceivable", sum(score > 0 for score in scores.values())),
        ("inconceivable", sum(score == 0 for score in scores.values())),
    ):
        assert per_target[category][0] == f"{count / 2:.2f}", category

    # The raw answers: one row per annotator and row of each HIT, with the value chosen.
    raw = by_assignment(answer_csv_rows(download(page, base, "rivers", "answers-csv")))
    assert sorted(raw) == sorted(s.assignment_id for s in submitted)
    for submission in submitted:
        rows = raw[submission.assignment_id]
        assert [(row["candidate"], row["value"]) for row in rows] == submission.rows
        assert {row["target"] for row in rows} == {submission.target}
        assert {row["counts"] for row in rows} == {"valid"}
        controls = {row["candidate"] for row in rows if row["control"] == "True"}
        assert len(controls) == 2 and submission.target in controls
    assert len({row[0]["worker"] for row in raw.values()}) == 3

    # The SWORDS JSON: each candidate's labels in the order collected, so score = accepts / labels.
    release = json.loads(download(page, base, "rivers", "swords"))
    released = {
        (release["targets"][substitute["target_id"]]["target"], substitute["substitute"]): release["substitute_labels"][
            sid
        ]
        for sid, substitute in release["substitutes"].items()
    }
    swords_value = {"accept": "TRUE", "reject": "FALSE", "abstain": "UNSURE"}
    assert released == {key: [swords_value[value] for value in values] for key, values in chosen.items()}
    assert {key: values.count("TRUE") / len(values) for key, values in released.items()} == scores


# --- ProLex -------------------------------------------------------------------------------------

PROLEX_TARGETS = [
    {
        "context": "The ticket is valid until May.",
        "target": "valid",
        "offset": 14,
        "pos": "adj",
        "cefr": "B1",
        "candidates": [
            {"text": "good", "cefr": "A1"},
            {"text": "legitimate", "cefr": "C1"},
            {"text": "usable", "cefr": "B2"},
        ],
    },
    {
        "context": "A big storm came in.",
        "target": "big",
        "offset": 2,
        "pos": "adj",
        "cefr": "A1",
        "candidates": [{"text": "large", "cefr": "A1"}, {"text": "huge", "cefr": "A2"}, {"text": "tiny", "cefr": "A2"}],
    },
]
# A row of the ProLex release, judged already: it comes back as it was imported and asks for no work.
PROLEX_RELEASE = (
    "target word,Sentence,acc_subs,unacc_subs,prof_acc_subs,prof_unacc_subs,t_words_cefr,prof_acc_cefr,"
    "prof_unacc_cefr\n"
    "quick,The **quick** reply helped.,\"['fast', 'rapid']\",['slow'],['rapid'],['fast'],1,[3],[0]\n"
)
PROLEX_LEVELS = {"valid": 2, "good": 0, "legitimate": 4, "usable": 3, "big": 0, "large": 0, "huge": 1, "tiny": 1}
PROLEX_JUDGMENTS = {
    "alice": {"good": "1", "legitimate": "1", "usable": "-1", "large": "1", "huge": "0", "tiny": "-1"},
    "bob": {"good": "-1", "legitimate": "1", "usable": "-1", "large": "1", "huge": "0", "tiny": "-1"},
}
# ProLex's keys type the value itself; bob uses the mouse.
PROLEX_KEYS = {"alice": {"1": "1", "-1": "-", "0": "0"}, "bob": None}


def test_a_prolex_collection_from_an_empty_database(
    live_server: Any, browser: Any, researcher_page: Any, tmp_path: Path
) -> None:
    base, page = live_server.url, researcher_page
    for username in PROLEX_JUDGMENTS:
        make_user(username)
    released = tmp_path / "released.csv"
    released.write_text(PROLEX_RELEASE, encoding="utf-8")
    path = tmp_path / "to_judge.jsonl"
    path.write_text("".join(json.dumps(target) + "\n" for target in PROLEX_TARGETS), encoding="utf-8")

    create_benchmark(page, base, name="proficiency", title="Expert judgments", scheme="prolex")
    import_file(page, base, name="proficiency", path=released, targets=1)
    import_file(page, base, name="proficiency", path=path, targets=2)
    # Both experts judge the first target (the overlap); the other goes to one of them.
    batch_id = create_batch(page, base, name="proficiency", annotators=["alice", "bob"], overlap=1)

    submitted: list[Submission] = []
    for username, judgments in PROLEX_JUDGMENTS.items():

        def answer(
            hit: Any, submission: Submission, judgments: dict[str, str] = judgments, who: str = username
        ) -> None:
            answer_rows(hit, submission, judgments.__getitem__, PROLEX_KEYS[who])

        submitted += work_until_done(
            browser,
            base,
            username,
            project="Expert judgments",
            summary="Judge each generated substitute",
            answer=answer,
        )
    by_target = Counter(s.target for s in submitted)
    assert sorted(by_target.values()) == [1, 2] and set(by_target) == {"valid", "big"}
    shared = next(target for target, count in by_target.items() if count == 2)

    # The HIT both experts judged shows each one's 1 / -1 / 0.
    open_hit_of(page, base, batch_id, shared)
    table = answers_on_hit_page(page)
    assert sorted(table) == ["alice", "bob"]
    for submission in (s for s in submitted if s.target == shared):
        for text, value in submission.rows:
            cell = table[submission.username][text]
            assert cell.locator("[data-answer]").get_attribute("data-answer") == value
            assert cell.inner_text().strip().split()[0] == value

    # The release's judgments count too: one for each of its three substitutes.
    judged = sum(len(s.rows) for s in submitted) + 3
    check_pipeline(
        page,
        base,
        "proficiency",
        collected={1: f"{judged} / {judged}"},
        stages={"quick": "judged", "valid": "judged", "big": "judged"},
        foreign=("step 2", "step 3"),
        finished=True,
    )

    # ProLex's rule: acceptable when the 1s outnumber the -1s (0 and ties decide nothing);
    # proficiency-oriented when also at least the target's level; a target without an acceptable
    # substitute is left out.
    votes: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for submission in submitted:
        for text, value in submission.rows:
            votes[submission.target][text].append(value)
    expected = {}
    for target, substitutes in votes.items():
        acceptable = [text for text, values in substitutes.items() if values.count("1") > values.count("-1")]
        if acceptable:
            expected[target] = (
                sorted(acceptable),
                sorted(text for text in acceptable if PROLEX_LEVELS[text] >= PROLEX_LEVELS[target]),
            )
    # Cohen's kappa over the substitutes both experts judged 1 or -1.
    pairs = [values for values in votes[shared].values() if len(values) == 2 and "0" not in values]
    observed = sum(first == second for first, second in pairs) / len(pairs)
    by_chance = sum(
        sum(values[0] == value for values in pairs) * sum(values[1] == value for values in pairs) / len(pairs) ** 2
        for value in ("1", "-1")
    )
    kappa = (observed - by_chance) / (1 - by_chance)
    (imported,) = csv.DictReader(io.StringIO(PROLEX_RELEASE))
    check_statistics(
        page,
        base,
        "proficiency",
        {
            "Targets (rows)": str(len(expected) + 1),
            "Contexts": str(len(expected) + 1),
            "Cohen's κ (two annotators, 0 left out)": f"{kappa:.3f}",
        },
    )
    rows = table_of(page, "Rows")
    assert {target: (sorted(cells[1].split(", ")), sorted(cells[2].split(", "))) for target, cells in rows.items()} == {
        "quick": (["fast", "rapid"], ["rapid"]),
        **expected,
    }

    raw = by_assignment(answer_csv_rows(download(page, base, "proficiency", "answers-csv")))
    assert sorted(raw) == sorted(s.assignment_id for s in submitted)
    for submission in submitted:
        assert [(row["candidate"], row["value"]) for row in raw[submission.assignment_id]] == submission.rows
    assert len({rows[0]["worker"] for rows in raw.values()}) == 2

    # The ProLex CSV: the imported row as it was, then the quadruplets of the targets judged here.
    release = list(csv.DictReader(io.StringIO(download(page, base, "proficiency", "prolex"))))
    assert release[0] == imported
    release = release[1:]
    found = {
        row["target word"]: (sorted(_python_list(row["acc_subs"])), sorted(_python_list(row["prof_acc_subs"])))
        for row in release
    }
    assert found == expected
    # "legitimate" (1 and 1) and "large" are acceptable whoever judged; "good" (1 and -1, when both
    # judged it), "huge" (0) and "tiny" (-1) never are.
    assert "legitimate" in found["valid"][0] and "large" in found["big"][0]
    assert all(not {"tiny", "huge"} & set(acceptable) for acceptable, _ in found.values())
    assert kappa != 0 and ("good" in found["valid"][0]) == (shared != "valid")
    for row in release:
        assert row["Sentence"].count("**") == 2 and f"**{row['target word']}**" in row["Sentence"]


def _python_list(cell: str) -> list[str]:
    import ast

    value = ast.literal_eval(cell)
    assert isinstance(value, list)
    return [str(item) for item in value]


# --- Smart Word Suggestions -----------------------------------------------------------------------

SWS_SENTENCES = {
    "s-1": "The results were very good and quick.",
    "s-2": "We had a nice time at the big party.",
}
REFINE, DIVERSIFY = "refine-usage", "diversify-expression"
# Per annotator and sentence: the token spans they mark, with suggestions and a type.
SWS_MARKS: dict[str, dict[str, list[tuple[int, int, str, str]]]] = {
    "alice": {
        "s-1": [(3, 5, "excellent", DIVERSIFY), (6, 7, "fast", REFINE), (1, 2, "outcomes", REFINE)],
        "s-2": [(3, 4, "pleasant", REFINE), (7, 8, "large", REFINE), (1, 2, "spent", DIVERSIFY)],
    },
    "bob": {
        "s-1": [(3, 5, "excellent; great", DIVERSIFY), (6, 7, "fast", REFINE), (2, 3, "seemed", REFINE)],
        "s-2": [(3, 4, "pleasant; lovely", REFINE), (7, 8, "huge", DIVERSIFY), (8, 9, "celebration", DIVERSIFY)],
    },
    "carol": {
        "s-1": [(3, 5, "great", REFINE), (6, 7, "rapid", DIVERSIFY), (0, 1, "These", REFINE)],
        "s-2": [(3, 4, "lovely", DIVERSIFY), (1, 2, "enjoyed", REFINE), (4, 5, "evening", REFINE)],
    },
}
SWS_TYPE_NUMBER = {REFINE: 1, DIVERSIFY: 2}


def _mark_with_the_keyboard(page: Any, start: int, end: int, suggestions: str, kind: str) -> None:
    page.focus(".sws-sentence")
    page.keyboard.press("Home")
    for _ in range(start):
        page.keyboard.press("ArrowRight")
    for _ in range(end - start - 1):
        page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "sws-suggestions"
    page.keyboard.type(suggestions)
    page.keyboard.press("Tab")  # the first type
    page.keyboard.press("Space" if kind == REFINE else "ArrowDown")
    page.keyboard.press("Enter")


def _mark_with_the_mouse(page: Any, start: int, end: int, suggestions: str, kind: str) -> None:
    page.locator(f".sws-sentence .token[data-index='{start}']").click()
    if end - start > 1:
        page.locator(f".sws-sentence .token[data-index='{end - 1}']").click(modifiers=["Shift"])
    page.fill("#sws-suggestions", suggestions)
    page.check(f"input[name=sws-type][value={kind}]")
    page.click("text=Add this target")


def test_a_smart_word_suggestions_collection_from_an_empty_database(
    live_server: Any, browser: Any, researcher_page: Any, tmp_path: Path
) -> None:
    base, page = live_server.url, researcher_page
    for username in SWS_MARKS:
        make_user(username)
    path = tmp_path / "sentences.json"
    path.write_text(
        json.dumps({sid: {"sentence": text, "substitutes": []} for sid, text in SWS_SENTENCES.items()}),
        encoding="utf-8",
    )

    create_benchmark(page, base, name="suggestions", title="Better words", scheme="sws")
    import_file(page, base, name="suggestions", path=path, targets=2)
    batch_id = create_batch(page, base, name="suggestions")

    sentence_of = {text: sid for sid, text in SWS_SENTENCES.items()}
    submitted: list[Submission] = []
    for username, plan in SWS_MARKS.items():
        mark = _mark_with_the_keyboard if username != "bob" else _mark_with_the_mouse

        def answer(hit: Any, submission: Submission, plan: Any = plan, mark: Any = mark) -> None:
            sentence = hit.locator(".sws").get_attribute("data-sentence")
            tokens = hit.locator(".sws-sentence .token").all_inner_texts()
            for start, end, suggestions, kind in plan[sentence_of[sentence]]:
                count = int(hit.inner_text(".sws-count"))
                mark(hit, start, end, suggestions, kind)
                wait_until(hit, f"document.querySelector('.sws-count').textContent === '{count + 1}'")
                text = " ".join(tokens[start:end])
                split = tuple(part.strip() for part in suggestions.split(";"))
                submission.marks.append(Mark(start, end, text, split, kind))
            submission.target = sentence_of[sentence]
            hit.click("#hit-submit")

        submitted += work_until_done(
            browser, base, username, project="Better words", summary="Mark words of a sentence", answer=answer
        )
    assert Counter(s.username for s in submitted) == {"alice": 2, "bob": 2, "carol": 2}

    # A HIT's page draws each annotator's marks on the sentence, with their suggestions and types.
    open_hit_of(page, base, batch_id, SWS_SENTENCES["s-1"])
    table = answers_on_hit_page(page)
    assert sorted(table) == ["alice", "bob", "carol"]
    for submission in (s for s in submitted if s.target == "s-1"):
        cell = table[submission.username][SWS_SENTENCES["s-1"]]
        marked = cell.locator("mark.target")
        assert sorted(re.sub(r"\d+(,\d+)*$", "", text) for text in marked.all_inner_texts()) == sorted(
            mark.text for mark in submission.marks
        )
        listed = cell.locator(".sws-review-targets li").all_inner_texts()
        assert sorted(listed) == sorted(
            f"{mark.text} → {'; '.join(mark.suggestions)} {mark.type}" for mark in submission.marks
        )

    check_pipeline(
        page,
        base,
        "suggestions",
        collected={1: f"{len(submitted)} / {len(submitted)}"},
        stages={SWS_SENTENCES["s-1"]: "marked", SWS_SENTENCES["s-2"]: "marked"},
        foreign=("step 2", "being judged"),
        finished=True,
    )
    # The merge: each sentence's targets marked by two annotators or more, {suggestion: votes}, and
    # the type most of them chose (refine-usage on a tie); a target marked by one annotator is dropped.
    merged: dict[str, dict[tuple[int, int], tuple[dict[str, int], int]]] = {}
    for sid in SWS_SENTENCES:
        marks = [mark for s in submitted if s.target == sid for mark in s.marks]
        merged[sid] = {}
        for span, annotators in Counter((mark.start, mark.end) for mark in marks).items():
            if annotators < 2:
                continue
            here = [mark for mark in marks if (mark.start, mark.end) == span]
            types = Counter(mark.type for mark in here)
            kind = DIVERSIFY if types[DIVERSIFY] > types[REFINE] else REFINE
            merged[sid][span] = (dict(Counter(s for mark in here for s in mark.suggestions)), SWS_TYPE_NUMBER[kind])
    assert (3, 5) in merged["s-1"] and (1, 2) not in merged["s-1"]
    kept = [entry for sentence in merged.values() for entry in sentence.values()]

    # Agreement (Wang et al. 2023): PA-det, the mean over pairs of annotators of the Jaccard of their
    # target sets; PA-sug, the mean over the targets a pair shares of the Jaccard of their suggestions.
    det, sug = [], []
    for sid in SWS_SENTENCES:
        answers = [{(m.start, m.end): set(m.suggestions) for m in s.marks} for s in submitted if s.target == sid]
        for index, one in enumerate(answers):
            for other in answers[index + 1 :]:
                det.append(len(one.keys() & other.keys()) / len(one.keys() | other.keys()))
                sug += [
                    len(one[span] & other[span]) / len(one[span] | other[span]) for span in one.keys() & other.keys()
                ]
    check_statistics(
        page,
        base,
        "suggestions",
        {
            "Sentences": "2",
            "Targets": str(len(kept)),
            "Suggestions": str(sum(len(votes) for votes, _ in kept)),
            "Votes": str(sum(sum(votes.values()) for votes, _ in kept)),
            "PA-det (targets, mean pairwise Jaccard)": f"{sum(det) / len(det):.4f}",
            "PA-sug (suggestions on shared targets)": f"{sum(sug) / len(sug):.4f}",
        },
    )

    raw = by_assignment(answer_csv_rows(download(page, base, "suggestions", "answers-csv")))
    assert sorted(raw) == sorted(s.assignment_id for s in submitted)
    for submission in submitted:
        (row,) = raw[submission.assignment_id]
        data = json.loads(row["data"])
        assert [(t["text"], tuple(t["suggestions"]), t["type"]) for t in data["targets"]] == [
            (mark.text, mark.suggestions, mark.type) for mark in sorted(submission.marks, key=lambda m: m.start)
        ]

    # The release: the sentences as imported, with the merged targets.
    release = json.loads(download(page, base, "suggestions", "sws"))
    assert set(release) == set(SWS_SENTENCES)
    for sid, text in SWS_SENTENCES.items():
        assert release[sid]["sentence"] == text
        found = {tuple(span): (votes, kind) for span, votes, kind in release[sid]["substitutes"]}
        assert found == merged[sid], sid
    assert merged["s-1"][(3, 5)] == ({"excellent": 2, "great": 2}, 2)
