import pytest

from analysis import services
from annotation.models import Benchmark
from tests.analysis.labelled import labelled_benchmark

pytestmark = pytest.mark.django_db

WORKERS = [f"w{i}" for i in range(10)]


@pytest.fixture
def benchmark() -> Benchmark:
    return labelled_benchmark(
        "fixture",
        [
            (
                "bright",
                "adj",
                [
                    ("clever", ["coinco", "roget"], "AAARARAARA"),  # 7/10: acceptable
                    ("shining", ["roget"], "RRRARRRRRR"),  # dropped by step 2, yet one accept
                    ("smart", ["coinco"], "ARAUARRRRR"),  # 3/10: conceivable
                    ("light", ["roget"], "RRU"),  # reduced: inconceivable
                ],
            ),
            ("run", "verb", [("sprint", ["roget"], "RRR"), ("dash", ["coinco"], "AAR")]),
        ],
        workers=WORKERS,
    )


def test_statistics_of_a_fixture(benchmark: Benchmark) -> None:
    result = services.benchmark_statistics(benchmark=benchmark)
    assert (result["contexts"], result["targets"], result["candidates"], result["labels"]) == (2, 2, 6, 39)
    assert result["per_target"] == pytest.approx(
        {"candidates": 3.0, "inconceivable": 1.0, "conceivable": 2.0, "acceptable": 1.0}
    )
    assert result["per_target_nonempty"]["acceptable"] == pytest.approx(1.0)
    assert result["abstain_share"] == pytest.approx(2 / 39)
    assert result["by_pos"]["verb"]["candidates"] == 2
    assert result["by_source"]["both"]["candidates"] == 1
    assert result["by_source"]["thesaurus-only"]["inconceivable"] == 2


def test_filtered_assignments_do_not_count(benchmark: Benchmark) -> None:
    # Only imported labels here; valid_labels() keeps them all.
    assert services.benchmark_statistics(benchmark=benchmark)["labels"] == 39


def test_the_filter_audit_of_a_fixture(benchmark: Benchmark) -> None:
    result = services.benchmark_filter_audit(benchmark=benchmark)
    assert result["audited"] == 3
    assert result["dropped"] == 1
    assert result["dropped_with_accept"] == 1
    assert result["share_dropped_with_accept"] == 1.0
    assert result["share_still_unacceptable"] == 1.0
    assert {(row["step2_labels"], row["pass_min_accepts"]) for row in result["grid"]} >= {(3, 1), (5, 3)}


def test_agreement_of_a_fixture(benchmark: Benchmark) -> None:
    result = services.benchmark_agreement(benchmark=benchmark, resamples=200)
    assert result["labels"] == 39
    assert result["workers"] == 10
    assert result["alpha"]["units"] == 6
    assert result["alpha"]["low"] <= result["alpha"]["alpha"] <= result["alpha"]["high"]
    first = next(row for row in result["worker_agreement"] if row["worker"] == "imported:w0")
    assert first["labels"] == 6
    assert first["control_accuracy"] is None
    assert result["kappa"]["summary"]["pairs"] == 45
    assert result["rbo"] is None


def test_frames_hold_the_export_rows(benchmark: Benchmark) -> None:
    frames = services.benchmark_frames(benchmark=benchmark)
    assert len(frames.labels) == 39
    assert list(frames.candidates["text"]) == ["clever", "shining", "smart", "light", "sprint", "dash"]
    clever = frames.candidates.iloc[0]
    assert (clever["accepts"], clever["rejects"], clever["labels"], clever["category"]) == (7, 3, 10, "acceptable")
    assert clever["sources"] == "coinco;roget"
    assert frames.labels.iloc[0]["worker"] == "imported:w0"


def test_a_re_annotation_is_kept_apart_once_marked(benchmark: Benchmark) -> None:
    from annotation.models import Candidate, Label

    # Re-annotate every fully labeled candidate with ten labels of another origin.
    for candidate in Candidate.objects.filter(target__benchmark=benchmark, text__in=["clever", "shining", "smart"]):
        letters = {"clever": "AAAAAAARRR", "shining": "RRRRRRRRRA", "smart": "AARRRRRRRR"}[candidate.text]
        Label.objects.bulk_create(
            Label(candidate=candidate, value={"A": "accept", "R": "reject"}[letter], origin="reannotation", position=i)
            for i, letter in enumerate(letters)
        )
    # A second origin alone is not a re-annotation (it may be more of the same benchmark).
    assert services.benchmark_statistics(benchmark=benchmark)["labels"] == 69
    with pytest.raises(ValueError, match="no labels"):
        services.benchmark_reannotation_set(benchmark=benchmark, origin="elsewhere")
    services.benchmark_reannotation_set(benchmark=benchmark, origin="reannotation")
    statistics = services.benchmark_statistics(benchmark=benchmark)
    assert statistics["labels"] == 39
    assert statistics["reannotation_origin"] == "reannotation"
    assert services.benchmark_frames(benchmark=benchmark).candidates["labels"].sum() == 39
    result = services.benchmark_agreement(benchmark=benchmark, resamples=50, rbo_samples=10)
    assert result["labels"] == 39
    rbo = result["rbo"]
    assert rbo["reannotation_origin"] == "reannotation"
    assert (rbo["candidates"], rbo["targets"], rbo["labels"]) == (3, 1, 30)
    assert [point["k"] for point in rbo["points"]] == list(range(1, 10))
    assert all(0.0 <= point["mean"] <= 1.0 for point in rbo["points"])
    none = services.benchmark_agreement(
        benchmark=benchmark, resamples=50, data=services.benchmark_data(benchmark=benchmark, reannotation_origin="")
    )
    assert none["rbo"] is None and none["labels"] == 69
    services.benchmark_reannotation_set(benchmark=benchmark, origin=None)
    assert services.benchmark_statistics(benchmark=benchmark)["reannotation_origin"] is None
