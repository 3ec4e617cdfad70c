"""Server-side SVG charts for the researcher's pages: no script, no CDN, readable when printed.

Each function takes plain numbers and returns one ``<svg>`` element as text. Every piece of text
that reaches the SVG (titles, names, tick labels) is escaped here, so a template may include
the result with ``|safe`` even though worker names come from outside.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape

# Colour-blind-safe (Okabe-Ito) hues, in the order series appear.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00")
INK, MUTED, GRID = "#1d2330", "#5b6475", "#d9dee7"
FONT = 'font-family="system-ui, -apple-system, Segoe UI, Roboto, sans-serif"'


def _number(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".") if abs(value - round(value)) > 1e-9 else str(round(value))


def _tick(value: float) -> str:
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return text if text not in ("", "-0") else "0"


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` round tick values covering [low, high]."""
    if high <= low:
        high = low + 1.0
    raw = (high - low) / max(count, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    ticks = [round(math.floor(low / step) * step, 10)]
    # The last tick is the first at or above ``high``, so the data never rises over the axis.
    while ticks[-1] < high - step * 1e-9:
        ticks.append(round(ticks[-1] + step, 10))
    return ticks


# The legend: its first row's baseline (under the title's, at 20), the height of a row, and the room
# a name takes (a swatch and a gap, then about 7 px a character at 11 px).
LEGEND_TOP = 38
LEGEND_ROW = 16
LEGEND_GAP = 24
LEGEND_CHARACTER = 7


@dataclass
class _Frame:
    """A plotting area inside an SVG of ``width`` x ``height`` with room for axes and a legend."""

    width: int
    height: int
    title: str
    x_label: str
    y_label: str
    left: int = 58
    right: int = 16
    top: int = 34
    bottom: int = 46
    # The legend's names: they take rows of their own under the title, never its line, so a long
    # title and a long legend cannot overlap; the rows add to the height, not take from the plot.
    legend_names: Sequence[str] = ()
    parts: list[str] = field(default_factory=list)
    legend_rows: list[list[tuple[float, int, str]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        row: list[tuple[float, int, str]] = []
        x = float(self.left)
        for index, name in enumerate(self.legend_names):
            width = LEGEND_GAP + LEGEND_CHARACTER * len(name)
            if row and x + width > self.width - self.right:
                self.legend_rows.append(row)
                row, x = [], float(self.left)
            row.append((x, index, name))
            x += width
        if row:
            self.legend_rows.append(row)
        extra = LEGEND_ROW * len(self.legend_rows)
        self.top += extra
        self.height += extra

    @property
    def plot_width(self) -> float:
        return self.width - self.left - self.right

    @property
    def plot_height(self) -> float:
        return self.height - self.top - self.bottom

    def x(self, value: float, low: float, high: float) -> float:
        return self.left + (value - low) / (high - low) * self.plot_width

    def y(self, value: float, low: float, high: float) -> float:
        return self.top + self.plot_height - (value - low) / (high - low) * self.plot_height

    def text(
        self,
        x: float,
        y: float,
        text: str,
        *,
        anchor: str = "middle",
        size: int = 12,
        color: str = INK,
        extra: str = "",
    ) -> None:
        self.parts.append(
            f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}" fill="{color}"{extra}>'
            f"{escape(text)}</text>"
        )

    def y_axis(self, ticks: Sequence[float], low: float, high: float, *, as_percent: bool = False) -> None:
        for tick in ticks:
            y = self.y(tick, low, high)
            self.parts.append(
                f'<line x1="{self.left}" x2="{self.width - self.right}" y1="{y:.1f}" y2="{y:.1f}" '
                f'stroke="{GRID}" stroke-width="1"/>'
            )
            label = f"{_number(tick * 100)}%" if as_percent else _tick(tick)
            self.text(self.left - 6, y + 4, label, anchor="end", size=11, color=MUTED)
        middle = self.top + self.plot_height / 2
        self.text(14, middle, self.y_label, size=12, color=MUTED, extra=f' transform="rotate(-90 14 {middle:.1f})"')

    def x_axis_line(self) -> None:
        y = self.top + self.plot_height
        self.parts.append(
            f'<line x1="{self.left}" x2="{self.width - self.right}" y1="{y:.1f}" y2="{y:.1f}" stroke="{MUTED}"/>'
        )
        self.text(self.left + self.plot_width / 2, self.height - 8, self.x_label, size=12, color=MUTED)

    def legend(self) -> None:
        """The rows of ``legend_names``, under the title (at y = 20)."""
        for row_index, row in enumerate(self.legend_rows):
            y = LEGEND_TOP + row_index * LEGEND_ROW
            for x, index, name in row:
                color = PALETTE[index % len(PALETTE)]
                self.parts.append(f'<rect x="{x:.1f}" y="{y - 9}" width="10" height="10" rx="2" fill="{color}"/>')
                self.text(x + 14, y, name, anchor="start", size=11)

    def render(self, description: str) -> str:
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {self.width} {self.height}" '
            f'width="100%" style="min-width: 520px" role="img" aria-label="{escape(self.title)}" class="chart" {FONT}>'
            f"<title>{escape(self.title)}</title><desc>{escape(description)}</desc>"
        )
        title = (
            f'<text x="{self.left}" y="20" font-size="14" font-weight="600" fill="{INK}">{escape(self.title)}</text>'
        )
        return head + title + "".join(self.parts) + "</svg>"


def empty_chart(title: str, message: str, *, width: int = 640, height: int = 120) -> str:
    frame = _Frame(width, height, title, "", "")
    frame.text(width / 2, height / 2 + 10, message, size=13, color=MUTED)
    return frame.render(message)


def grouped_histogram(
    *,
    title: str,
    bins: Sequence[str],
    series: Mapping[str, Sequence[float]],
    x_label: str,
    y_label: str,
    counts: Mapping[str, Sequence[int]] | None = None,
    width: int = 720,
    height: int = 320,
) -> str:
    """Bars of shares (0..1) per bin, one colour per series, side by side within a bin.

    With ``counts`` (the numbers the shares are of), each bar says its n above it and the legend
    each series' total, so a share of a handful reads apart from a share of thousands.
    """
    if not series or not bins:
        return empty_chart(title, "No scored candidates yet.", width=width)
    names = [f"{name} (n = {sum(counts[name])})" if counts else name for name in series]
    frame = _Frame(width, height, title, x_label, y_label, top=44 if counts else 34, legend_names=names)
    top = max((max(values) for values in series.values() if len(values)), default=0.0)
    ticks = nice_ticks(0.0, max(top, 0.05), 5)
    high = ticks[-1]
    frame.y_axis(ticks, 0.0, high, as_percent=True)
    slot = frame.plot_width / len(bins)
    bar = slot * 0.8 / len(series)
    for series_index, (name, values) in enumerate(series.items()):
        color = PALETTE[series_index % len(PALETTE)]
        for bin_index, value in enumerate(values):
            x = frame.left + bin_index * slot + slot * 0.1 + series_index * bar
            y = frame.y(value, 0.0, high)
            frame.parts.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(bar - 1, 1):.1f}" '
                f'height="{frame.top + frame.plot_height - y:.1f}" fill="{color}">'
                f"<title>{escape(name)}, {escape(bins[bin_index])}: {value * 100:.1f}%"
                + (f" (n = {counts[name][bin_index]})" if counts else "")
                + "</title></rect>"
            )
            if counts:
                frame.text(x + bar / 2, y - 3, str(counts[name][bin_index]), size=8, color=MUTED)
    for bin_index, name in enumerate(bins):
        frame.text(
            frame.left + (bin_index + 0.5) * slot, frame.top + frame.plot_height + 16, name, size=10, color=MUTED
        )
    frame.x_axis_line()
    frame.legend()
    note = "; the number above each bar is its count" if counts else ""
    return frame.render(f"{title}: share of candidates per score bin for " + ", ".join(series) + note)


def line_with_error(
    *,
    title: str,
    points: Sequence[tuple[float, float, float]],
    x_label: str,
    y_label: str,
    error_note: str = "error bars: ± one standard deviation",
    width: int = 720,
    height: int = 300,
) -> str:
    """A line through (x, mean) with bars of ± one standard deviation; ``error_note`` says so on the plot."""
    points = [(x, mean, std) for x, mean, std in points if mean is not None and not math.isnan(mean)]
    if not points:
        return empty_chart(title, "No re-annotation to compare with.", width=width)
    frame = _Frame(width, height, title, x_label, y_label, top=48)
    frame.text(frame.left, 38, error_note, anchor="start", size=11, color=MUTED)
    xs = [x for x, _, _ in points]
    low_x, high_x = min(xs) - 0.5, max(xs) + 0.5
    lows = [mean - (std or 0) for _, mean, std in points]
    highs = [mean + (std or 0) for _, mean, std in points]
    ticks = nice_ticks(max(0.0, min(lows) - 0.02), min(1.0, max(highs) + 0.02), 5)
    low_y, high_y = ticks[0], ticks[-1]
    frame.y_axis(ticks, low_y, high_y)
    color = PALETTE[0]
    path = " ".join(
        f"{'M' if index == 0 else 'L'}{frame.x(x, low_x, high_x):.1f},{frame.y(mean, low_y, high_y):.1f}"
        for index, (x, mean, _) in enumerate(points)
    )
    frame.parts.append(f'<path d="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
    for x, mean, std in points:
        cx = frame.x(x, low_x, high_x)
        top = frame.y(min(mean + (std or 0), high_y), low_y, high_y)
        bottom = frame.y(max(mean - (std or 0), low_y), low_y, high_y)
        frame.parts.append(f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{top:.1f}" y2="{bottom:.1f}" stroke="{color}"/>')
        for y in (top, bottom):
            frame.parts.append(
                f'<line x1="{cx - 4:.1f}" x2="{cx + 4:.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="{color}"/>'
            )
        frame.parts.append(
            f'<circle cx="{cx:.1f}" cy="{frame.y(mean, low_y, high_y):.1f}" r="4" fill="{color}">'
            f"<title>k = {_number(x)}: {mean:.3f} ± {std or 0:.3f}</title></circle>"
        )
        frame.text(cx, frame.top + frame.plot_height + 16, _number(x), size=11, color=MUTED)
    frame.x_axis_line()
    return frame.render(f"{title}: mean for each value of the x axis; {error_note}")


def scatter(
    *,
    title: str,
    points: Sequence[tuple[float, float, str]],
    x_label: str,
    y_label: str,
    x_threshold: float | None = None,
    marked: Sequence[tuple[float, float, str]] = (),
    marked_name: str = "filtered",
    width: int = 720,
    height: int = 320,
) -> str:
    """Points (x, y) in [0, 1] x [0, 1] named by a tooltip; a dashed line marks ``x_threshold``.

    ``marked`` points (filtered workers) are drawn as crosses in their own colour, named in a legend,
    so they read apart from the circles without relying on colour alone.
    """
    if not points and not marked:
        return empty_chart(title, "No worker has both control answers and compared labels.", width=width)
    every = [*points, *marked]
    frame = _Frame(width, height, title, x_label, y_label)
    # Half a tenth of room below the lowest point, so none sits on the axis.
    low_x = min(0.5, math.floor(min(x for x, _, _ in every) * 10 - 0.5) / 10)
    low_y = min(0.5, math.floor(min(y for _, y, _ in every) * 10 - 0.5) / 10)
    y_ticks = nice_ticks(low_y, 1.0, 5)
    frame.y_axis(y_ticks, y_ticks[0], y_ticks[-1])
    x_ticks = nice_ticks(low_x, 1.0, 5)
    for tick in x_ticks:
        frame.text(
            frame.x(tick, x_ticks[0], x_ticks[-1]),
            frame.top + frame.plot_height + 16,
            _tick(tick),
            size=11,
            color=MUTED,
        )
    if x_threshold is not None and x_ticks[0] <= x_threshold <= x_ticks[-1]:
        x = frame.x(x_threshold, x_ticks[0], x_ticks[-1])
        frame.parts.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{frame.top}" y2="{frame.top + frame.plot_height:.1f}" '
            f'stroke="{PALETTE[5]}" stroke-dasharray="5 4"/>'
        )
        frame.text(x + 4, frame.top + 12, f"threshold {_tick(x_threshold)}", anchor="start", size=11, color=PALETTE[5])
    for x_value, y_value, name in points:
        below = x_threshold is not None and x_value < x_threshold
        frame.parts.append(
            f'<circle cx="{frame.x(x_value, x_ticks[0], x_ticks[-1]):.1f}" '
            f'cy="{frame.y(y_value, y_ticks[0], y_ticks[-1]):.1f}" r="5" '
            f'fill="{PALETTE[5] if below else PALETTE[0]}" fill-opacity="0.75">'
            f"<title>{escape(name)}: {x_value:.3f}, {y_value:.3f}</title></circle>"
        )
    for x_value, y_value, name in marked:
        cx = frame.x(x_value, x_ticks[0], x_ticks[-1])
        cy = frame.y(y_value, y_ticks[0], y_ticks[-1])
        frame.parts.append(
            f'<path class="marked" d="M{cx - 5:.1f},{cy - 5:.1f}L{cx + 5:.1f},{cy + 5:.1f}'
            f'M{cx - 5:.1f},{cy + 5:.1f}L{cx + 5:.1f},{cy - 5:.1f}" stroke="{INK}" stroke-width="2.5">'
            f"<title>{escape(name)} ({escape(marked_name)}): {x_value:.3f}, {y_value:.3f}</title></path>"
        )
    if marked:
        x = frame.width - frame.right - 150
        frame.parts.append(
            f'<circle cx="{x:.1f}" cy="15" r="5" fill="{PALETTE[0]}" fill-opacity="0.75"/>'
            f'<path d="M{x + 65:.1f},10L{x + 75:.1f},20M{x + 65:.1f},20L{x + 75:.1f},10" '
            f'stroke="{INK}" stroke-width="2.5"/>'
        )
        frame.text(x + 8, 19, "valid", anchor="start", size=11)
        frame.text(x + 80, 19, marked_name, anchor="start", size=11)
    frame.x_axis_line()
    extra = f"; crosses: {marked_name} work" if marked else ""
    return frame.render(f"{title}: one point per worker{extra}")
