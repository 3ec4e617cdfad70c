import xml.etree.ElementTree as ElementTree

import pytest

from analysis.plots import empty_chart, grouped_histogram, line_with_error, nice_ticks, scatter

HOSTILE = '<script>alert("x")</script> & co'


def _parse(svg: str) -> ElementTree.Element:
    return ElementTree.fromstring(svg)


def test_charts_are_well_formed_svg_with_every_text_escaped() -> None:
    charts = [
        grouped_histogram(title=HOSTILE, bins=["0", HOSTILE], series={HOSTILE: [0.5, 0.5]}, x_label="x", y_label="y"),
        line_with_error(title=HOSTILE, points=[(1, 0.5, 0.1), (2, 0.6, 0.05)], x_label=HOSTILE, y_label="y"),
        scatter(title="t", points=[(0.95, 0.8, HOSTILE), (0.5, 0.6, "w2")], x_label="x", y_label="y", x_threshold=0.9),
        empty_chart(HOSTILE, HOSTILE),
    ]
    for svg in charts:
        root = _parse(svg)
        assert root.tag.endswith("svg")
        assert "<script" not in svg
        assert root.attrib["role"] == "img"


def test_bars_scale_to_their_share() -> None:
    svg = grouped_histogram(title="t", bins=["a", "b"], series={"s": [0.2, 0.8]}, x_label="x", y_label="y")
    bars = [element for element in _parse(svg).iter() if element.tag.endswith("rect") and element.find("*") is not None]
    heights = [float(bar.attrib["height"]) for bar in bars]
    assert heights[1] == pytest.approx(4 * heights[0], rel=0.01)


def test_the_worker_scatter_marks_workers_below_the_threshold() -> None:
    svg = scatter(title="t", points=[(0.95, 0.8, "good"), (0.5, 0.6, "bad")], x_label="x", y_label="y", x_threshold=0.9)
    colours = [element.attrib["fill"] for element in _parse(svg).iter() if element.tag.endswith("circle")]
    assert colours[0] != colours[1]
    assert "threshold 0.9" in svg


def test_ticks_cover_the_data() -> None:
    assert nice_ticks(0.0, 0.69) == [0.0, 0.2, 0.4, 0.6, 0.8]
    assert nice_ticks(0.5, 1.0) == [0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    assert nice_ticks(0.3, 0.3)[-1] >= 0.3


def test_empty_inputs_say_so() -> None:
    assert "No re-annotation" in line_with_error(title="t", points=[], x_label="x", y_label="y")
    assert "No scored candidates" in grouped_histogram(title="t", bins=[], series={}, x_label="x", y_label="y")


def test_each_bar_says_its_n_and_each_series_its_total() -> None:
    svg = grouped_histogram(
        title="t", bins=["a", "b"], series={"s": [0.25, 0.75]}, counts={"s": [1, 3]}, x_label="x", y_label="y"
    )
    texts = [element.text for element in _parse(svg).iter() if element.tag.endswith("text")]
    assert "1" in texts and "3" in texts
    assert "s (n = 4)" in texts


def test_the_error_bars_say_what_they_are_on_the_plot() -> None:
    svg = line_with_error(
        title="t", points=[(1, 0.5, 0.1)], x_label="x", y_label="y", error_note="error bars: ± one SD over 100 draws"
    )
    texts = [element.text for element in _parse(svg).iter() if element.tag.endswith("text")]
    assert "error bars: ± one SD over 100 draws" in texts


def test_filtered_workers_are_crosses_named_in_a_legend_even_alone() -> None:
    svg = scatter(
        title="t", points=[(0.95, 0.8, "good")], marked=[(0.3, 0.4, "spam")], x_label="x", y_label="y", x_threshold=0.9
    )
    crosses = [element for element in _parse(svg).iter() if element.attrib.get("class") == "marked"]
    assert len(crosses) == 1 and "spam (filtered)" in svg
    # The axis reaches down to the filtered worker rather than clipping it.
    assert "0.2" in [element.text for element in _parse(svg).iter() if element.tag.endswith("text")]
    alone = scatter(title="t", points=[], marked=[(0.3, 0.4, "spam")], x_label="x", y_label="y")
    assert "No worker" not in alone and "marked" in alone


def test_a_long_legend_takes_rows_under_the_title_and_never_covers_it_or_the_bars() -> None:
    sources = {f"source number {index} with a long name": [0.1, 0.9] for index in range(6)}
    counts = {name: [1, 9] for name in sources}
    title = "Score distribution by source"
    svg = grouped_histogram(title=title, bins=["a", "b"], series=sources, counts=counts, x_label="x", y_label="y")
    root = _parse(svg)
    texts = [element for element in root.iter() if element.tag.endswith("text")]
    (title_text,) = [text for text in texts if text.text == title]
    legend = [text for text in texts if (text.text or "").startswith("source number")]
    assert len(legend) == 6
    rows = sorted({float(text.attrib["y"]) for text in legend})
    assert len(rows) > 1, "six long names do not fit one row of 720 px"
    assert min(rows) >= float(title_text.attrib["y"]) + 14, "the legend starts under the title's line"
    width = float(root.attrib["viewBox"].split()[2])
    for text in legend:
        assert float(text.attrib["x"]) + 7 * len(text.text or "") <= width
    bars = [element for element in root.iter() if element.tag.endswith("rect") and element.find("*") is not None]
    assert min(float(bar.attrib["y"]) for bar in bars) > max(rows), "the tallest bar stays under the legend"
