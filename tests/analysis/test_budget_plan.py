"""budget_plan on a stored benchmark: the swords rule from its counts, a simulated interval for
what chance decides, the money with the batch's reward and its crowd's fee, and the command."""

from __future__ import annotations

import json
from decimal import Decimal
from io import StringIO

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.template.loader import render_to_string
from django.urls import reverse

from analysis.services.budget import BudgetUnavailable, budget_plan
from annotation.models import Candidate
from crowds.mturk.fees import MTURK_FEES
from hits.models import Batch
from tests.analysis.labelled import labelled_benchmark
from tests.base import make_cast
from tests.hits.factories import make_batch, make_benchmark
from tests.hits.generation_data import build_benchmark

pytestmark = pytest.mark.django_db


def _pilot(name: str = "pilot"):  # type: ignore[no-untyped-def]
    # One candidate past step 2 with an accept (7 more), one dropped, one never labelled.
    return labelled_benchmark(
        name,
        [("bright", "adj", [("shiny", ["coinco"], "ARR"), ("dull", ["coinco"], "RRR"), ("lit", ["roget"], "")])],
    )


def _policy(plan: dict, name: str) -> dict:  # type: ignore[type-arg]
    return next(row for row in plan["policies"] if row["policy"] == name)


def test_the_swords_plan_counts_what_the_rule_decides_and_simulates_the_rest() -> None:
    benchmark = _pilot()
    plan = budget_plan(benchmark=benchmark, simulations=50, seed=1)
    assert (plan["labels_so_far"], plan["candidates"], plan["candidates_with_labels"]) == (6, 3, 2)
    swords = _policy(plan, "swords")
    assert swords["available"] and not swords["exact"] and swords["settled_candidates"] == 1
    labels = swords["labels"]
    # 7 for "shiny", and 3 or 10 for "lit".
    assert 7 + 3 <= labels["low"] <= labels["estimate"] <= labels["high"] <= 7 + 10
    assert {labels["low"], labels["high"]} <= {10, 17}
    # No batch: a new batch's reward (0.10) on the local queue, no fee, ten candidates an assignment.
    assert plan["backend"] == "local" and plan["reward"] == "0.10" and not plan["with_fee"]
    assert swords["assignments"]["estimate"] == -(-labels["estimate"] // 10)
    assert Decimal(swords["cost"]["estimate"]) == Decimal("0.10") * swords["assignments"]["estimate"]
    # The SWORDS scheme registers its other policies too: each planned within what the design allows
    # (three candidates of at most ten labels each, six labels so far).
    assert [row["policy"] for row in plan["policies"]] == ["swords", "curtail", "adaptive"]
    for name in ("curtail", "adaptive"):
        planned = _policy(plan, name)
        assert planned["available"]
        assert 0 <= planned["labels"]["low"] <= planned["labels"]["estimate"] <= planned["labels"]["high"] <= 30 - 6


def test_the_money_follows_the_batch_reward_and_the_crowd_fee() -> None:
    benchmark = _pilot("priced")
    batch = make_batch(benchmark, reward=Decimal("0.25"), assignments_per_hit=3)
    Batch.objects.filter(pk=batch.pk).update(backend="mturk")
    batch.refresh_from_db()
    plan = budget_plan(benchmark=benchmark, batch=batch, simulations=20, seed=2)
    swords = _policy(plan, "swords")
    assert plan["with_fee"] and plan["reward"] == "0.25" and plan["batch"] == batch.pk
    per_assignment = Decimal("0.25") + MTURK_FEES.reward_fee(Decimal("0.25"), 3)
    assert Decimal(swords["cost"]["estimate"]) == per_assignment * swords["assignments"]["estimate"]
    assert Decimal(swords["cost"]["low"]) <= Decimal(swords["cost"]["estimate"]) <= Decimal(swords["cost"]["high"])


def test_a_scheme_without_per_candidate_labels_has_no_plan() -> None:
    benchmark = make_benchmark("px-plan", scheme="prolex")
    with pytest.raises(BudgetUnavailable, match="px-plan"):
        budget_plan(benchmark=benchmark)


def test_the_command_prints_the_plan_and_its_json() -> None:
    _pilot("commanded")
    out = StringIO()
    call_command("budget_plan", "commanded", "--json", "--simulations", "10", "--seed", "3", stdout=out)
    plan = json.loads(out.getvalue())
    assert plan["simulations"] == 10 and plan["seed"] == 3
    assert _policy(plan, "swords")["labels"]["estimate"] in (10, 17)
    text = StringIO()
    call_command("budget_plan", "commanded", "--simulations", "10", stdout=text)
    assert "swords" in text.getvalue() and "curtail" in text.getvalue()
    with pytest.raises(CommandError, match="no benchmark named 'missing'"):
        call_command("budget_plan", "missing")
    with pytest.raises(CommandError, match="no batch 999999"):
        call_command("budget_plan", "commanded", "--batch", "999999")


def test_the_batch_form_preview_shows_the_plan_priced_at_the_batch(client) -> None:  # type: ignore[no-untyped-def]
    cast = make_cast()
    client.force_login(cast.researcher)
    benchmark = build_benchmark("planned-costs")
    form = {"step": "2", "seed": "5", "targets": "", "backend": "mturk", "assignment_minutes": "30", "reward": "0.12"}
    response = client.post(reverse("batch-list", args=[benchmark.name]), {**form, "preview": "1"})
    assert response.status_code == 200 and not Batch.objects.exists()
    preview = response.context["preview"]
    [panel] = response.context["preview_panels"]
    expected = budget_plan(
        benchmark=benchmark,
        reward=Decimal("0.12"),
        backend="mturk",
        assignments_per_hit=preview.assignments_per_hit,
    )
    assert panel.context == expected
    assert expected["with_fee"] and expected["reward"] == "0.12" and expected["labels_so_far"] == 0
    swords = _policy(expected, "swords")
    # Nothing labelled yet: every candidate needs its 3 labels and at most 10.
    assert (
        3 * expected["candidates"] <= swords["labels"]["low"] <= swords["labels"]["high"] <= 10 * expected["candidates"]
    )
    page = response.content.decode()
    assert 'id="budget-plan"' in page
    # No label yet: nothing to resample, and the panel does not claim it.
    assert "chance alone" in page
    assert f"${swords['cost']['estimate']}" in page and 'data-policy="curtail"' in page


def test_the_adaptive_plan_reads_the_policys_own_rule_per_candidate_source() -> None:
    """The planner decides an adaptive candidate exactly as the refreshes do: the mixture prior fitted
    per source to the benchmark's labels, both epsilons (docs/design.md §13)."""
    from analysis import budget
    from schemes.swords.progress import stopping_rule
    from schemes.swords.settings import settings_of
    from schemes.swords.stopping import MIXTURE_PRIOR, UNIFORM_MIXTURE

    # Roget: 24 candidates, most rejected by all three, a few accepted by all (a two-humped source,
    # which the mixture holds and one Beta per group cannot); CoInCo: too few for a prior of its own.
    rows = [(f"r{n}", ["roget"], "RRR" if n < 20 else "AAA") for n in range(24)]
    rows += [(f"c{n}", ["coinco"], "AAR") for n in range(5)]
    benchmark = labelled_benchmark("plan-mixture", [("calm", "adj", rows)])
    benchmark.scheme_settings = {**benchmark.scheme_settings, "stopping_policy": "adaptive"}
    benchmark.save(update_fields=["scheme_settings"])
    settings = settings_of(benchmark)
    assert settings.adaptive_prior == MIXTURE_PRIOR
    ids = np.asarray(
        sorted(Candidate.objects.filter(target__benchmark=benchmark).values_list("pk", flat=True)), dtype=np.int64
    )
    context = budget.PlanContext(
        max_labels=settings.total_labels,
        step2_labels=settings.step2_labels,
        pass_min_accepts=settings.pass_min_accepts,
        prior_alpha=np.ones(ids.size),
        prior_beta=np.ones(ids.size),
        settings=settings,
        benchmark=benchmark,
        candidate_ids=ids,
    )
    planned = budget.RULES["adaptive"](context)
    policy = stopping_rule(benchmark=benchmark, settings=settings)
    assert policy is not None and policy.prior("roget") != UNIFORM_MIXTURE
    roget = next(row for row, pk in enumerate(ids) if Candidate.objects.get(pk=pk).sources == ["roget"])
    coinco = next(row for row, pk in enumerate(ids) if Candidate.objects.get(pk=pk).sources == ["coinco"])
    # Hand-built counts, each asked of the planner's rule and of the policy's own.
    cases = [(0, 2), (0, 3), (0, 4), (1, 3), (2, 3), (3, 3), (2, 4), (4, 6), (0, 9), (5, 9)]
    for row, source in ((roget, "roget"), (coinco, "coinco")):
        accepts = np.asarray([a for a, _ in cases], dtype=np.int64)
        labels = np.asarray([n for _, n in cases], dtype=np.int64)
        got = planned(accepts, labels, np.full(len(cases), row, dtype=np.int64))
        assert got.tolist() == [policy.decided(a, n, source) for a, n in cases], source
    # The two sources' priors differ, and so do some decisions: the rule is read per source.
    assert [policy.decided(a, n, "roget") for a, n in cases] != [policy.decided(a, n, "coinco") for a, n in cases]


def test_the_plans_interval_resamples_the_targets_labelled_so_far(settings) -> None:  # type: ignore[no-untyped-def]
    """The estimate reads the priors fitted to the labels so far; the interval, priors refitted to
    resamples of the labelled targets, which differ here (one target's candidates all accepted,
    the others' mostly not), so it is wider than chance alone would make it."""
    rows = []
    for number in range(8):
        # Target 0: every candidate accepted by all three; the others: one in five accepted once.
        pattern = (lambda index: "AAA") if number == 0 else (lambda index: "ARR" if index == 0 else "RRR")
        rows.append((f"word{number}", "adj", [(f"w{number}c{index}", ["roget"], pattern(index)) for index in range(5)]))
    for number in range(8, 48):
        rows.append((f"word{number}", "adj", [(f"w{number}c{index}", ["roget"], "") for index in range(5)]))
    benchmark = labelled_benchmark("plan-resampled", rows)

    settings.BUDGET_PLAN_RESAMPLES = 60
    plan = budget_plan(benchmark=benchmark, simulations=60, seed=4)
    alone = budget_plan(benchmark=benchmark, simulations=60, seed=4, resamples=0)
    assert (plan["resamples"], alone["resamples"]) == (60, 0)
    swords, chance = _policy(plan, "swords")["labels"], _policy(alone, "swords")["labels"]
    assert swords["estimate"] == chance["estimate"]
    assert swords["low"] <= swords["estimate"] <= swords["high"]
    assert swords["high"] - swords["low"] > 2 * (chance["high"] - chance["low"])
    # Every fresh candidate takes 3 labels and at most 10; the 40 labelled ones are past step 2.
    fresh = 40 * 5
    assert 3 * fresh + 5 * 7 <= swords["low"] and swords["high"] <= 10 * fresh + 5 * 7 + 7 * 7
    assert plan == budget_plan(benchmark=benchmark, simulations=60, seed=4)
    # The panel says what its interval holds.
    said = render_to_string("analysis/_budget_panel.html", {"panel": plan, "benchmark": benchmark})
    assert "60 more, each under priors refitted to a resample of the targets labelled so far" in said
    said = render_to_string("analysis/_budget_panel.html", {"panel": alone, "benchmark": benchmark})
    assert "chance alone" in said and "refitted" not in said
