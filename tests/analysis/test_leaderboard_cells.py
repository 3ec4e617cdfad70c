"""The leaderboard's figure cells built in Python (``analysis.views.leaderboard_cells``, docs/design.md
§10) equal what the template's loop showed: each value by ``floatformat`` with its column's decimals,
a dash for a figure not computed."""

from __future__ import annotations

import random
from typing import Any

from django.template import engines
from django.utils import translation

from analysis.evaluation import Figure
from analysis.views import leaderboard_cells

# The loop the evaluation template held before the cells were built in Python.
_LOOP = engines["django"].from_string(
    '{% for column, value in values %}<td class="num">{% if value is None %}\u2013{% else %}'
    "{{ value|floatformat:column.decimals }}{% endif %}</td>{% endfor %}"
)

_COLUMNS = [
    Figure(name="gap", title="GAP", decimals=2),
    Figure(name="count", title="targets", decimals=0),
    Figure(name="fine", title="P10", html="P<sup>10</sup>", decimals=3),
]


def _looped(row: dict[str, Any]) -> str:
    return _LOOP.render({"values": [(column, row.get(column.name)) for column in _COLUMNS]})


def test_the_cells_equal_the_templates_loop_for_any_values() -> None:
    rng = random.Random(3)
    values: list[Any] = [None, 0, 0.0, -0.0, 1, -1, 0.005, 0.015, 2.675, 1e-9, -12.3456, 123456.789, 10**7, True]
    values += [rng.uniform(-1000, 1000) for _ in range(300)]
    values += [round(rng.uniform(0, 100), rng.randint(0, 4)) for _ in range(300)]
    for language in ("en", "de"):
        with translation.override(language):
            for _ in range(400):
                row = {column.name: rng.choice(values) for column in _COLUMNS if rng.random() < 0.9}
                assert leaderboard_cells(_COLUMNS, row) == _looped(row), row
