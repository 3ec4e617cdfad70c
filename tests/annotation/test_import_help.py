"""The import page and the benchmark page list the registered import formats with their titles, say
which scheme a scheme's own format fills, and offer it only for benchmarks of that scheme."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator

import pytest
from django.test import Client

from annotation.importers import ImportFormat, ParsedFile, import_formats, register_import_format
from annotation.importers.formats import _FORMATS
from annotation.models import Benchmark
from tests.base import PASSWORD, Cast

pytestmark = pytest.mark.django_db


def _nothing(stream: io.BufferedIOBase, file: str) -> ParsedFile:
    return ParsedFile(records=iter(()), total=0)


@pytest.fixture(autouse=True)
def toy_format() -> Iterator[None]:
    register_import_format(ImportFormat("toy-lines", "Toy lines <one a line>", _nothing, scheme="sws"))
    yield
    _FORMATS.pop("toy-lines")


def _client() -> Client:
    client = Client()
    client.login(username="rita", password=PASSWORD)
    return client


def _options(page: str) -> list[str]:
    select = re.search(r'<select name="format".*?</select>', page, re.S)
    assert select is not None
    return re.findall(r'<option value="([^"]+)"', select.group(0))


def test_the_import_page_offers_the_general_formats_and_the_schemes_own(cast: Cast) -> None:
    Benchmark.objects.create(name="px", scheme="prolex")
    Benchmark.objects.create(name="marks", scheme="sws")
    general = [found.name for found in import_formats() if not found.scheme]
    assert general == ["csv", "jsonl", "swords"]
    client = _client()

    prolex_page = client.get("/benchmarks/px/import/").content.decode()
    assert _options(prolex_page) == ["auto", *general, "prolex"]
    listed = re.findall(r'<li data-format="([^"]+)"><strong>(.*?)</strong>', prolex_page)
    assert listed == [(found.name, found.title) for found in import_formats() if found.scheme in ("", "prolex")]
    assert "fills ProLex (1 / -1 / 0, experts) benchmarks" in prolex_page
    assert "toy-lines" not in prolex_page and 'data-format="sws"' not in prolex_page

    sws_page = client.get("/benchmarks/marks/import/").content.decode()
    assert _options(sws_page) == ["auto", *general, "sws", "toy-lines"]
    # A format registered by a scheme shows with its title, escaped, and the scheme it fills.
    assert (
        "<strong>Toy lines &lt;one a line&gt;</strong> (<code>toy-lines</code>): fills Smart Word Suggestions"
        in sws_page
    )
    assert 'data-format="prolex"' not in sws_page


def test_a_format_of_another_scheme_is_refused_by_the_form(cast: Cast) -> None:
    Benchmark.objects.create(name="px", scheme="prolex")
    upload = io.BytesIO(b"{}")
    upload.name = "marks.json"
    response = _client().post("/benchmarks/px/import/", {"file": upload, "format": "sws"})
    assert response.status_code == 400
    assert "Select a valid choice. sws is not one of the available choices." in response.content.decode()
    assert not Benchmark.objects.get(name="px").targets.exists()


def test_the_benchmark_page_names_the_formats_from_the_registry(cast: Cast) -> None:
    Benchmark.objects.create(name="marks", scheme="sws")
    page = _client().get("/benchmarks/marks/").content.decode()
    section = re.search(r'<section class="card" id="imports">.*?</section>', page, re.S)
    assert section is not None
    text = " ".join(section.group(0).split())
    assert "SWORDS JSON; " in text and "Toy lines &lt;one a line&gt; (fills Smart Word Suggestions" in text
    assert "ProLex CSV" not in text
