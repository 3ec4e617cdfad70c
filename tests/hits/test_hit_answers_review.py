"""The researcher's HIT page shows each assignment's answers as its scheme renders them read-only:
SWS spans, suggestions and types on the sentence, ProLex's 1 / -1 / 0, SWORDS's accept / reject /
abstain, generation's proposals; every text escaped."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import Client

from hits.models import HITItem
from tests.base import PASSWORD, Cast
from tests.hits.submitted_work import generation_work, prolex_work, swords_work, sws_work, the_hit

pytestmark = pytest.mark.django_db


def _page(hit_id: int) -> str:
    client = Client()
    client.login(username="rita", password=PASSWORD)
    response = client.get(f"/hits/{hit_id}/")
    assert response.status_code == 200
    return response.content.decode()


def _answer_cells(page: str) -> list[str]:
    return re.findall(r'<td class="answer">(.*?)</td>', page, flags=re.S)


def _row_cells(page: str, item_text: str) -> list[str]:
    """The answer cells of the table row of one item, in the assignments' order."""
    row = re.search(rf"<tr>\s*<td class=\"num\">\d+</td>\s*<td>{re.escape(item_text)}</td>(.*?)</tr>", page, re.S)
    assert row is not None, item_text
    return _answer_cells(row.group(1))


def test_sws_answers_show_their_spans_suggestions_and_types_on_the_sentence(cast: Cast, tmp_path: Path) -> None:
    benchmark, _ = sws_work(cast, tmp_path)
    page = _page(the_hit(benchmark).pk)
    alice, bob, carol = _answer_cells(page)
    # Alice's two targets drawn where she marked them, numbered, with their suggestions and types.
    assert '<mark class="target" title="target 1">very good<sup>1</sup></mark>' in alice
    assert '<mark class="target" title="target 2">quick<sup>2</sup></mark>' in alice
    assert "The results were " in alice and "results" not in re.findall(r"<mark[^>]*>(.*?)<sup>", alice)
    assert "<strong>very good</strong> → excellent; great" in alice and "refine-usage" in alice
    assert "<strong>quick</strong> → fast" in alice and "diversify-expression" in alice
    # Bob's suggestion is shown as the text he typed, never as markup.
    assert '<mark class="target" title="target 1">results<sup>1</sup></mark>' in bob
    assert "&lt;b&gt;outcomes&lt;/b&gt;" in bob and "<b>outcomes" not in page
    # Carol set the sentence aside: her reason, escaped, and no target.
    assert "discarded" in carol and "It is &lt;i&gt;garbled&lt;/i&gt;." in carol
    assert "<mark" not in carol
    # The hits room shows no stored word where the scheme has its own rendering.
    assert ">marked<" not in page


def test_prolex_answers_show_in_the_schemes_words(cast: Cast) -> None:
    benchmark, submitted = prolex_work(cast)
    page = _page(the_hit(benchmark, "overall").pk)
    assert [s.worker for s in submitted] == ["alice", "alice", "bob", "bob"]

    def shown(cells: list[str]) -> list[str]:
        return [re.sub(r"<[^>]+>", "", cell).strip() for cell in cells]

    assert shown(_row_cells(page, "generally")) == ["1 acceptable", "1 acceptable"]
    assert shown(_row_cells(page, "fundamentally")) == ["0 uncertain", "-1 unacceptable"]
    assert shown(_row_cells(page, "mostly")) == ["-1 unacceptable", "-1 unacceptable"]


def test_swords_answers_show_accept_reject_and_abstain(cast: Cast) -> None:
    benchmark, _ = swords_work(cast)
    hit = the_hit(benchmark)
    page = _page(hit.pk)
    assert 'data-answer="accept"' in page
    perched, rested = _row_cells(page, "perched"), _row_cells(page, "rested")
    assert ['data-answer="accept"' in cell for cell in perched] == [True, True]
    assert ['data-answer="reject"' in cell for cell in rested] == [False, True]
    assert ['data-answer="abstain"' in cell for cell in _row_cells(page, "sat")] == [False, True]
    # Every item of the HIT has a cell per assignment.
    assert len(_answer_cells(page)) == 2 * HITItem.objects.filter(hit=hit).count()


def test_generation_answers_show_the_proposals_or_none(cast: Cast) -> None:
    benchmark, _ = generation_work(cast)
    page = _page(the_hit(benchmark).pk)
    alice, bob = _answer_cells(page)
    assert "<li>perched</li>" in alice and "<li>was seated</li>" in alice
    assert "lemmas: perch" in alice
    assert "none comes to mind" in bob and "<li>" not in bob
