"""Every benchmark still fits the platform it measures, without running one: each module of bench/
imports, its command answers --help, every name it takes from the platform's modules is there, and
the aggregation benchmark's budget planner runs on a tiny release (docs/benchmarks.md)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pkgutil
import sys
from pathlib import Path
from typing import Any

import pytest

import bench
from bench import aggregation
from bench.__main__ import BENCHMARKS, PLAN

BENCH_DIR = Path(bench.__file__).resolve().parent
MODULES = sorted(f"bench.{found.name}" for found in pkgutil.iter_modules([str(BENCH_DIR)]))
# The platform's packages: a benchmark's import of one of these names what it measures.
PLATFORM = {"analysis", "annotation", "crowdlex", "crowds", "hits", "review", "schemes"}


def _source(module: str) -> ast.Module:
    return ast.parse((BENCH_DIR / f"{module.removeprefix('bench.')}.py").read_text())


def _platform_module(name: str) -> bool:
    return name.split(".")[0] in PLATFORM


def _resolves(module: Any, name: str) -> bool:
    """Whether ``module.name`` is an attribute of the module or a submodule of its package."""
    if hasattr(module, name):
        return True
    try:
        importlib.import_module(f"{module.__name__}.{name}")
    except ModuleNotFoundError:
        return False
    return True


def platform_names_used(module: str) -> list[tuple[int, str, str]]:
    """(line, module, name) for every name a bench module takes from a platform module: what it
    imports from one (``from analysis import budget``, at the top or inside a function) and every
    attribute it reads of a platform module bound to a name (``budget.forecast_labels``)."""
    tree = _source(module)
    bound: dict[str, str] = {}
    used: list[tuple[int, str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and _platform_module(node.module):
            for alias in node.names:
                used.append((node.lineno, node.module, alias.name))
                target = f"{node.module}.{alias.name}"
                if _is_module(target):
                    bound[alias.asname or alias.name] = target
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if _platform_module(alias.name) and alias.asname:
                    bound[alias.asname] = alias.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound:
            used.append((node.lineno, bound[node.value.id], node.attr))
    return used


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


@pytest.mark.parametrize("module", MODULES)
def test_every_bench_module_imports(module: str) -> None:
    importlib.import_module(module)


@pytest.mark.parametrize("module", MODULES)
def test_every_name_a_benchmark_takes_from_the_platform_is_there(module: str) -> None:
    used = platform_names_used(module)
    missing = [
        f"line {line}: {owner}.{name}"
        for line, owner, name in used
        if not _resolves(importlib.import_module(owner), name)
    ]

    assert missing == [], f"{module} uses names the platform no longer has"


def test_the_name_check_reads_the_names_a_benchmark_uses() -> None:
    used = {(owner, name) for _, owner, name in platform_names_used("bench.aggregation")}

    assert ("analysis", "budget") in used
    assert ("analysis.budget", "forecast_labels") in used


def _has_main(module: str) -> bool:
    return any(isinstance(node, ast.FunctionDef) and node.name == "main" for node in _source(module).body)


COMMANDS = sorted(module for module in MODULES if module != "bench.__main__" and _has_main(module))


def test_every_benchmark_the_run_of_them_all_names_is_a_command() -> None:
    named = {f"bench.{name}" for name in {*BENCHMARKS, *(name for name, _ in PLAN)}}

    assert named <= set(COMMANDS)


@pytest.mark.parametrize("module", COMMANDS)
def test_every_benchmark_answers_help(
    module: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    imported = importlib.import_module(module)
    monkeypatch.setattr(sys, "argv", [module, "--help"])

    with pytest.raises(SystemExit) as exited:
        imported.main()

    assert exited.value.code == 0
    assert "usage:" in capsys.readouterr().out


def _tiny_release() -> dict[str, Any]:
    """Four targets of three substitutes each, labelled as SWORDS releases them: three labels per
    substitute, ten for one with an accept among its first three."""
    targets: dict[str, Any] = {f"t{index}": {} for index in range(4)}
    substitutes: dict[str, Any] = {}
    labels: dict[str, list[str]] = {}
    for index in range(4):
        for number, sources in enumerate((["coinco"], ["thesaurus"], ["coinco", "thesaurus"])):
            sid = f"s{index}{number}"
            substitutes[sid] = {"target_id": f"t{index}", "extra": {"sources": sources}}
            labels[sid] = ["TRUE"] + ["FALSE"] * 9 if number != 1 else ["FALSE", "UNSURE", "FALSE"]
    return {"targets": targets, "substitutes": substitutes, "substitute_labels": labels}


def test_the_aggregation_benchmarks_planner_plans_the_rest_of_a_tiny_release() -> None:
    release = _tiny_release()

    plan = aggregation.plan_release(release, pilot=0.25, seed=1, simulations=20, resamples=20)

    # One target is the pilot (two substitutes of ten labels, one of three); three are left.
    assert (plan.pilot_targets, plan.targets, plan.pilot_labels, plan.used) == (1, 4, 23, 69)
    assert plan.policy == "swords"
    # Under the swords rule each of the nine unlabelled substitutes takes three labels, or ten past step 2.
    assert 9 * 3 <= plan.forecast.low <= plan.forecast.estimate <= plan.forecast.high <= 9 * 10


def test_the_refreshes_that_ran_are_read_from_the_workers_log(tmp_path: Path) -> None:
    from bench.refresh_backlog import refreshes_that_ran

    log = tmp_path / "worker.log"
    log.write_text(
        "[INFO] Task review.tasks.benchmark_refresh[a-1] succeeded in 0.12s: {'filtered': 0, 'advanced': 1}\n"
        "[INFO] Task review.tasks.benchmark_refresh[a-2] succeeded in 0.001s: None\n"
        "[INFO] Task review.tasks.benchmark_signals[a-3] succeeded in 0.3s: {'blocked': 0}\n"
        "[INFO] Task review.tasks.benchmark_refresh[a-4] succeeded in 1.5s: {'filtered': 2, 'advanced': 0}\n"
    )

    # Sent again because another was running (None) is no refresh; the bot signals are not one either.
    assert refreshes_that_ran(log) == 2


def test_the_soak_refuses_a_floor_too_short_or_too_long(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from bench import soak

    for seconds in ("0", "601"):
        monkeypatch.setattr(sys, "argv", ["bench.soak", "--no-database-restart", "--floor-seconds", seconds])
        with pytest.raises(SystemExit) as exited:
            soak.main()
        assert exited.value.code == 2
        assert "--floor-seconds must be 1..600" in capsys.readouterr().err


def test_the_claim_cycles_latency_is_the_slower_requests_99th_percentile() -> None:
    from bench.claim_cycle import ClientStats, Measured, slowest_request_p99

    first = ClientStats(claims=[0.010] * 99 + [0.500], submits=[0.020] * 100)
    second = ClientStats(claims=[0.012] * 100, submits=[0.030] * 98 + [0.900, 0.950])
    measured = Measured(stats=[first, second], used=[0.0, 0.0, 0.0, 0.0], load=(0.0, 0.0))

    # Of 200 claims one took 0.5 s (under the 99th percentile's rank); of 200 submits two took 0.9 s.
    assert slowest_request_p99(measured) == 0.900


def test_the_downloads_benchmark_measures_every_scheme_unless_told_and_refuses_an_unknown_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from annotation.models import scheme_choices
    from bench import downloads

    # Every scheme a benchmark may take has a benchmark of its own, measured by default.
    assert set(downloads.SCHEMES) == {name for name, _ in scheme_choices()}
    with pytest.raises(SystemExit) as exited:
        downloads.main(["--schemes", "prolex,tsr"])

    assert exited.value.code == 2
    assert "unknown schemes tsr" in capsys.readouterr().err


def test_the_schemes_released_files_are_seeded_and_of_the_test_splits_judgements(tmp_path: Path) -> None:
    from bench import scheme_files

    writers = (scheme_files.write_prolex_file, scheme_files.write_sws_file, scheme_files.write_tsar_file)
    for writer in writers:
        first, again, other = tmp_path / "first", tmp_path / "again", tmp_path / "other"
        writer(first, scale=0.01, seed=0)
        writer(again, scale=0.01, seed=0)
        writer(other, scale=0.01, seed=1)
        assert first.read_bytes() == again.read_bytes() != other.read_bytes(), writer.__name__

    # At 1x: the test split's targets and judgements (ProLex also names 39 substitutes unjudged).
    targets, substitutes, judgments = scheme_files.write_prolex_file(tmp_path / "prolex.csv")
    assert (targets, substitutes, judgments) == (762, 45_705 + 39, 253_917)
    instances, suggestions = scheme_files.write_tsar_file(tmp_path / "tsar.tsv")
    assert instances == 10_157 and abs(suggestions - 253_917) < 25
    sentences, _, votes = scheme_files.write_sws_file(tmp_path / "sws.json")
    assert sentences == 4_500 and 0.9 < votes / 253_917 < 1.2
