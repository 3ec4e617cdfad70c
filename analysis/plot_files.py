"""A benchmark's plots as files: the SVG the statistics page shows, standalone, and a PNG of it.

The PNG is drawn from that same SVG by cairosvg, on Debian's libcairo2 (the Makefile installs it),
so the two files never differ in what they show. matplotlib would draw a second, different plot;
a browser-based renderer would need chromium on the server. cairosvg reads only the SVG given:
it fetches nothing, which keeps it safe and offline.
"""

from __future__ import annotations

import re

from analysis.figures import scheme_figures
from annotation.models import Benchmark

FILE_TYPES = {"svg": "image/svg+xml", "png": "image/png"}
# Pixels across of a PNG: twice the SVG's own width, sharp on a high-density screen or a slide.
PNG_SCALE = 2


class PlotError(LookupError):
    """No such plot for the benchmark's scheme, or no such file type."""


def plot_names(benchmark: Benchmark) -> list[str]:
    try:
        return list(scheme_figures(benchmark).plots)
    except LookupError:
        return []


def plot_svg(*, benchmark: Benchmark, plot: str) -> str:
    """The plot as a standalone SVG document: its own size rather than the page's 100% width."""
    plots = scheme_figures(benchmark).plots
    if plot not in plots:
        known = ", ".join(plots) or "none"
        raise PlotError(f"no plot named {plot!r} for a {benchmark.scheme} benchmark (its plots: {known})")
    svg = plots[plot](benchmark)
    width, height = re.search(r'viewBox="0 0 (\d+) (\d+)"', svg).groups()  # type: ignore[union-attr]
    sized = svg.replace('width="100%" style="min-width: 520px"', f'width="{width}" height="{height}"', 1)
    # A white ground: a transparent PNG turns black text unreadable on a dark slide or viewer.
    background = f'<rect width="{width}" height="{height}" fill="#ffffff"/>'
    grounded = re.sub(r"(<desc>.*?</desc>)", r"\1" + background, sized, count=1)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + grounded


def svg_to_png(svg: str) -> bytes:
    import cairosvg  # a C library behind it: loaded only when a PNG is asked for

    width = int(re.search(r'viewBox="0 0 (\d+) ', svg).group(1))  # type: ignore[union-attr]
    png: bytes = cairosvg.svg2png(bytestring=svg.encode("utf-8"), output_width=width * PNG_SCALE, unsafe=False)
    return png


def plot_file(*, benchmark: Benchmark, plot: str, file_type: str) -> tuple[bytes, str]:
    """(content, media type) of a plot as ``svg`` or ``png``."""
    if file_type not in FILE_TYPES:
        raise PlotError(f"plots download as {' or '.join(FILE_TYPES)}, not {file_type!r}")
    svg = plot_svg(benchmark=benchmark, plot=plot)
    content = svg.encode("utf-8") if file_type == "svg" else svg_to_png(svg)
    return content, FILE_TYPES[file_type]


def plot_filename(*, benchmark: Benchmark, plot: str, file_type: str) -> str:
    return f"{benchmark.name}-{plot}.{file_type}"
