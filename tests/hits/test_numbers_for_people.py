"""Numbers as people read them: parts counted from 1 on researchers' pages as on the annotator's, no
empty part of speech before a target's id, and a deadline never "within 0 minutes"."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from datetime import timezone as timezone_of

import pytest
from django.test import Client
from django.utils import timezone
from django.utils.dateformat import format as date_format
from django.utils.html import format_html

from annotation.templatetags.moments import FORMATS, time_left, when
from tests.base import Cast
from tests.hits.factories import claim, make_batch, make_benchmark, make_hit, make_target

pytestmark = pytest.mark.django_db


def _text(page: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))


def test_parts_count_from_one_and_a_missing_part_of_speech_leaves_no_stray_comma(cast: Cast) -> None:
    benchmark = make_benchmark()
    batch = make_batch(benchmark)
    target = make_target(benchmark, pos="")
    hits = [make_hit(batch, target, part=part) for part in range(2)]
    client = Client()
    client.force_login(cast.researcher)

    batch_page = client.get(f"/batches/{batch.pk}/").content.decode()
    parts = re.findall(r'<td class="num">(\d+)</td>\s*<td class="num">\d+ / \d+', batch_page)
    assert sorted(parts) == ["1", "2"]
    assert "(, target" not in batch_page and f"(target {target.pk})" in batch_page
    assert "part 2" in _text(client.get(f"/hits/{hits[1].pk}/").content.decode())
    assert "part 0" not in _text(client.get(f"/hits/{hits[0].pk}/").content.decode())
    target_page = _text(client.get(f"/targets/{target.pk}/").content.decode())
    assert f"Target {target.pk} · ·" not in target_page and not re.search(rf"Target {target.pk} · (·|$)", target_page)


def test_the_time_left_rounds_up_to_the_minute_and_says_seconds_in_the_last_one() -> None:
    now = timezone.now()
    assert time_left(now + timedelta(seconds=45), now) == "45 seconds"
    assert time_left(now + timedelta(seconds=59.2), now) == "1 minute"
    assert time_left(now + timedelta(seconds=1), now) == "1 second"
    assert time_left(now + timedelta(seconds=61), now) == "2 minutes"
    assert time_left(now + timedelta(seconds=60), now) == "1 minute"
    assert time_left(now + timedelta(minutes=90), now) == "1 hour 30 minutes"
    assert time_left(now + timedelta(hours=2), now) == "2 hours"
    assert time_left(now - timedelta(seconds=5), now) == "no time: it has run out"


def test_a_one_minute_hit_never_asks_for_work_within_0_minutes(cast: Cast) -> None:
    benchmark = make_benchmark()
    batch = make_batch(benchmark, assignment_duration=timedelta(minutes=1))
    make_hit(batch, make_target(benchmark))
    assignment = claim(cast.alice)
    client = Client()
    client.force_login(cast.alice)
    page = _text(client.get(f"/work/assignments/{assignment.pk}/").content.decode())
    assert "0 minutes" not in page
    # Django's own "timeuntil" said "0 minutes" for the 59.9 s left of a one-minute HIT.
    assert re.search(r"Please submit within (1 minute|\d\d? seconds) \(by \d\d:\d\d UTC \)", page), page[:600]


@pytest.mark.parametrize("shown", sorted(FORMATS))
def test_a_moment_is_written_as_djangos_date_format_writes_it(shown: str) -> None:
    """``when`` writes each of its formats itself: the same text as Django's ``date`` formatter,
    escaped as ``format_html`` escapes it, for moments naive and aware, in any zone, early and late."""
    zones = [UTC, timezone_of(timedelta(hours=5, minutes=30)), timezone_of(timedelta(hours=-8))]
    moments = [
        datetime(year, 1 + i % 12, 1 + i % 28, i % 24, (7 * i) % 60, (13 * i) % 60, 1000 * i)
        for i, year in enumerate([1, 999, 1970, 2024, 2026, 9999])
    ]
    moments += [moment.replace(tzinfo=zone) for moment in moments[1:-1] for zone in zones]
    for moment in moments:
        utc = moment.astimezone(UTC) if moment.tzinfo else moment
        expected = format_html(
            '<time datetime="{}" data-local="{}">{} UTC</time>',
            utc.isoformat(),
            shown,
            date_format(utc, FORMATS[shown]),
        )
        assert when(moment, shown) == expected, moment
