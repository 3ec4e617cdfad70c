"""Times as people read them: ``{{ value|when }}`` writes a ``<time>`` element in UTC that
static/crowdlex/local_time.js rewrites in the reader's zone, the UTC text kept on hover."""

from __future__ import annotations

import math
from datetime import UTC, datetime

from django import template
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

# The argument of ``when``: what of the moment is shown, and its UTC text without the script.
FORMATS = {"datetime": "Y-m-d H:i", "date": "Y-m-d", "time": "H:i", "seconds": "Y-m-d H:i:s"}


def _date(t: datetime) -> str:
    return f"{t.year:04d}-{t.month:02d}-{t.day:02d}"


def _time(t: datetime) -> str:
    return f"{t.hour:02d}:{t.minute:02d}"


# Each format of ``FORMATS`` written as Django's ``date`` writes it: its general formatter parsed the
# format on each call, a tenth of the annotator's page's own template (docs/design.md §4).
WRITTEN = {
    "datetime": lambda t: f"{_date(t)} {_time(t)}",
    "date": _date,
    "time": _time,
    "seconds": lambda t: f"{_date(t)} {_time(t)}:{t.second:02d}",
}


@register.filter
def when(value: datetime | None, shown: str = "datetime") -> SafeString | str:
    """``value`` as a ``<time>`` element (``shown``: datetime, date, time or seconds); "" for None,
    so that ``|default:"—"`` still applies."""
    if value is None or value == "":
        return ""
    if shown not in FORMATS:
        raise template.TemplateSyntaxError(f"when: {shown!r} is not one of {', '.join(FORMATS)}")
    utc = value.astimezone(UTC) if timezone.is_aware(value) else value
    # Digits, separators and a name of FORMATS: nothing to escape.
    return mark_safe(f'<time datetime="{utc.isoformat()}" data-local="{shown}">{WRITTEN[shown](utc)} UTC</time>')


def _count(number: int, unit: str) -> str:
    return f"{number} {unit}" if number == 1 else f"{number} {unit}s"


@register.filter
def time_left(deadline: datetime | None, now: datetime | None = None) -> str:
    """The time until ``deadline`` as a person should read it when asked to hurry: rounded up to
    the minute (a HIT of one minute never says "0 minutes"), in seconds for its last minute."""
    if deadline is None:
        return ""
    seconds = math.ceil((deadline - (now or timezone.now())).total_seconds())
    if seconds <= 0:
        return "no time: it has run out"
    if seconds < 60:
        return _count(seconds, "second")
    minutes = math.ceil(seconds / 60)
    if minutes < 60:
        return _count(minutes, "minute")
    hours, minutes = divmod(minutes, 60)
    return _count(hours, "hour") + (f" {_count(minutes, 'minute')}" if minutes else "")
