"""The replay crowd collects a benchmark from a released SWORDS file's labels through the real queue,
under each stopping policy (docs/design.md §13): the labels bought and the decisions are what each
policy's rule says of the labels drawn."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Benchmark, Candidate, CandidateStage, Label, Target, TargetStage
from annotation.services import benchmark_import
from hits.models import HIT, Batch
from hits.services import benchmark_settings_update
from review.replay import crowd_replay
from schemes.swords.formats import context_id, substitute_id, target_id
from schemes.swords.pipeline import CandidateProgress, labels_missing
from schemes.swords.release import released_labels
from schemes.swords.settings import settings_of
from schemes.swords.stopping import ADAPTIVE, CURTAIL, StoppingRule, decisions
from tests.base import Cast

pytestmark = pytest.mark.django_db

T, F, U = "TRUE", "FALSE", "UNSURE"
# Two targets; each substitute's released labels, as SWORDS releases them: 3 labels (no accept among
# them: dropped) or 10 (an accept among the first 3); "placid" is a release of 3 with an accept.
RELEASE: list[tuple[str, str, str, str, dict[str, list[str]]]] = [
    (
        "The river was calm after the storm.",
        "calm",
        "ADJ",
        "roget",
        {
            "still": [T] * 10,
            "quiet": [T, F] * 5,
            "stormy": [F] * 3,
            "placid": [T, F, F],
        },
    ),
    (
        "She will send the letter tomorrow.",
        "send",
        "VERB",
        "coinco",
        {
            "mail": [F] * 10,
            "post": [T] * 7 + [F, U, F],
            "dispatch": [F] * 8 + [T, U],
        },
    ),
]
VALUE = {T: "accept", F: "reject", U: "abstain"}


def write_swords(
    path: Path, *, with_labels: bool, release: list[tuple[str, str, str, str, dict[str, list[str]]]] = RELEASE
) -> Path:
    data: dict[str, Any] = {"contexts": {}, "targets": {}, "substitutes": {}, "substitutes_lemmatized": True}
    labels: dict[str, list[str]] = {}
    for text, word, pos, source, substitutes in release:
        cid = context_id(text)
        data["contexts"][cid] = {"context": text}
        tid = target_id(context_id=cid, target=word, offset=text.index(word), pos=pos)
        data["targets"][tid] = {"context_id": cid, "target": word, "offset": text.index(word), "pos": pos}
        for substitute, values in substitutes.items():
            sid = substitute_id(target_id=tid, substitute=substitute)
            data["substitutes"][sid] = {"target_id": tid, "substitute": substitute, "extra": {"sources": [source]}}
            labels[sid] = values
    if with_labels:
        data["substitute_labels"] = labels
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def release(tmp_path: Path) -> Path:
    return write_swords(tmp_path / "release.json", with_labels=True)


def collect(tmp_path: Path, release: Path, name: str, **settings: object) -> tuple[Benchmark, Any]:
    """Import the release's candidates without labels, set the policy, collect by replay."""
    benchmark_import(path_or_file=write_swords(tmp_path / f"{name}.json", with_labels=False), benchmark_name=name)
    benchmark = Benchmark.objects.get(name=name)
    assert not Label.objects.filter(candidate__target__benchmark=benchmark).exists()
    if settings:
        benchmark_settings_update(benchmark=benchmark, scheme_settings=settings)
    report = crowd_replay(benchmark=benchmark, path=release, seed=4, workers=20)
    assert report.finished, report.stuck
    return benchmark, report


def drawn(benchmark: Benchmark) -> dict[str, list[str]]:
    """Each candidate's valid labels in the order the crowd gave them."""
    result: dict[str, list[str]] = {c.text: [] for c in Candidate.objects.filter(target__benchmark=benchmark)}
    labels = Label.objects.filter(candidate__target__benchmark=benchmark, assignment__filtered=False)
    for text, value in labels.order_by("pk").values_list("candidate__text", "value"):
        result[text].append(value)
    return result


def released_values() -> dict[str, list[str]]:
    return {sub: [VALUE[v] for v in values] for *_, substitutes in RELEASE for sub, values in substitutes.items()}


def check_rounds(sequence: list[str], *, rule: StoppingRule, first: int, released: int) -> None:
    """The rounds the rule asks for, over the labels in the order drawn: undecided at every round's
    start, and at the end decided or out of released labels."""
    accepts = [value == "accept" for value in sequence]
    n = first
    while n < len(sequence):
        assert not rule.decided(sum(accepts[:n]), n), f"bought past a decision at {n} labels: {sequence}"
        n += rule.labels_to_buy(sum(accepts[:n]), n)
    assert n == len(sequence), f"rounds of the rule end at {n}, {len(sequence)} bought: {sequence}"
    assert rule.decided(sum(accepts), n) or n == released, sequence


def test_the_swords_policy_replays_three_labels_then_seven_more_after_an_accept(tmp_path: Path, release: Path) -> None:
    benchmark, report = collect(tmp_path, release, "replay-swords")
    release_of = released_values()
    total = 0
    for text, values in drawn(benchmark).items():
        # Drawn without replacement: never more of a value than the release holds (placid aside).
        if text != "placid":
            assert not Counter(values) - Counter(release_of[text]), text
        expected = 10 if "accept" in values[:3] else 3
        assert len(values) == expected, (text, values)
        total += expected
    # placid's release holds 3 labels with an accept: step 3's 7 more are drawn again from them.
    assert len(drawn(benchmark)["placid"]) == 10 and report.labels_beyond_release == 7
    assert report.labels == total and report.labels_drawn == total - 7
    assert report.stopping_policy == "swords" and report.hits_returned == 0
    assert set(Target.objects.filter(benchmark=benchmark).values_list("stage", flat=True)) == {TargetStage.DONE}


def test_curtail_buys_labels_until_no_remaining_label_could_change_a_decision(
    tmp_path: Path, release: Path, client: Client, cast: Cast
) -> None:
    benchmark, report = collect(tmp_path, release, "replay-curtail", stopping_policy="curtail")
    rule = StoppingRule(CURTAIL, maximum=10)
    release_of = released_values()
    collected = drawn(benchmark)
    for text, values in collected.items():
        assert not Counter(values) - Counter(release_of[text]), text
        check_rounds(values, rule=rule, first=3, released=len(release_of[text]))
        if len(release_of[text]) == 10:
            # Curtailment keeps the decisions all ten released labels give.
            assert decisions(values.count("accept"), len(values)) == decisions(release_of[text].count("accept"), 10)
    # Hand-worked: still stops at 6 accepts; mail needs all ten (0/10 inconceivable, 1/10 would not be);
    # the releases of 3 run out after step 2 and their decision stands on them.
    assert collected["still"] == ["accept"] * 6
    assert len(collected["mail"]) == 10
    assert len(collected["stormy"]) == 3 and len(collected["placid"]) == 3
    assert report.labels_beyond_release == 0 and report.candidates_exhausted >= 2
    assert report.labels == sum(len(values) for values in collected.values())
    # Fewer labels than a flat ten per candidate, and follow-up rounds did the buying.
    assert report.labels < 10 * len(collected)
    assert HIT.objects.filter(batch__benchmark=benchmark, batch__step=3).count() >= 2

    # The pipeline page and its API show the policy and the decided candidates, by target and source.
    client.force_login(cast.researcher)
    page = client.get(reverse("pipeline-progress", args=[benchmark.name])).content.decode()
    assert "Stopping policy curtail" in page and "Candidates by decision (curtail policy), by source" in page
    assert ">Decided<" in page and ">Undecided<" in page
    api = APIClient()
    api.force_authenticate(cast.researcher)
    progress = api.get(reverse("api-pipeline-progress", args=[benchmark.name])).json()
    assert "Stopping policy curtail" in json.dumps(progress)


def test_a_replay_in_waves_makes_a_batch_per_part_and_draws_what_one_batch_draws(tmp_path: Path, release: Path) -> None:
    whole, whole_report = collect(tmp_path, release, "replay-one-part", stopping_policy="curtail")
    benchmark_import(
        path_or_file=write_swords(tmp_path / "parts.json", with_labels=False), benchmark_name="replay-parts"
    )
    parts = Benchmark.objects.get(name="replay-parts")
    benchmark_settings_update(benchmark=parts, scheme_settings={"stopping_policy": "curtail"})
    report = crowd_replay(benchmark=parts, path=release, seed=4, workers=20, wave=1)
    assert report.finished and report.targets == 2, report.stuck
    # One step-2 batch per target, in the targets' order.
    targets = list(Target.objects.filter(benchmark=parts).order_by("pk").values_list("pk", flat=True))
    batches = list(Batch.objects.filter(benchmark=parts, step=2).order_by("pk"))
    assert [set(HIT.objects.filter(batch=batch).values_list("target_id", flat=True)) for batch in batches] == [
        {targets[0]},
        {targets[1]},
    ]
    # Each candidate's labels are drawn in its own seeded order and curtail stops on them alone:
    # the same labels, whatever the parts.
    assert drawn(parts) == drawn(whole) and report.labels == whole_report.labels


def test_adaptive_stops_by_the_predictive_rule_never_below_its_floor(tmp_path: Path, release: Path) -> None:
    benchmark, report = collect(
        tmp_path,
        release,
        "replay-adaptive",
        stopping_policy="adaptive",
        adaptive_prior="beta",
        adaptive_epsilon=0.05,
        adaptive_floor=3,
    )
    settings = settings_of(benchmark)
    # Too few candidates per source for an estimate: the uniform prior throughout.
    rule = StoppingRule(ADAPTIVE, maximum=10, epsilon=settings.adaptive_epsilon, floor=3)
    release_of = released_values()
    collected = drawn(benchmark)
    for text, values in collected.items():
        assert len(values) >= 3
        assert not Counter(values) - Counter(release_of[text]), text
        check_rounds(values, rule=rule, first=3, released=len(release_of[text]))
    assert report.labels_beyond_release == 0
    assert report.labels == sum(len(values) for values in collected.values())
    assert report.stopping_policy == "adaptive"
    # Hand-worked: 3 accepts of 3 under Beta(1, 1) give Beta(4, 1); acceptable changes only if at most
    # 2 of the 7 to come are accepts: 4 * [B(4, 8) + 7 B(5, 7) + 21 B(6, 6)] = 0.0030 + 0.0121 + 0.0303
    # = 1/22 = 0.045 < 0.05, so "still" stops at 3 (curtail needs 6). 9 rejects leave a change of
    # 1/11 = 0.09 > 0.05: "mail" goes on to ten.
    assert collected["still"] == ["accept"] * 3
    assert len(collected["mail"]) == 10


# Releases of 4 and 5 labels: after the first round of 3, curtail's next round would ask for 3 or 4
# labels (the fewest that could decide), more than the release still holds.
SHORT_RELEASE: list[tuple[str, str, str, str, dict[str, list[str]]]] = [
    (
        "The lake was serene at dawn.",
        "serene",
        "ADJ",
        "roget",
        {"tranquil": [T, F, F, T], "peaceful": [T, T, F, F, F], "still": [T] * 10, "noisy": [F] * 3},
    ),
]


@pytest.mark.parametrize("policy", ["curtail", "adaptive"])
def test_the_replay_never_asks_a_candidate_beyond_its_release(tmp_path: Path, policy: str) -> None:
    release = write_swords(tmp_path / "short.json", with_labels=True, release=SHORT_RELEASE)
    name = f"replay-short-{policy}"
    bare = write_swords(tmp_path / "short-bare.json", with_labels=False, release=SHORT_RELEASE)
    benchmark_import(path_or_file=bare, benchmark_name=name)
    benchmark = Benchmark.objects.get(name=name)
    benchmark_settings_update(benchmark=benchmark, scheme_settings={"stopping_policy": policy})
    report = crowd_replay(benchmark=benchmark, path=release, seed=4, workers=20)
    assert report.finished, report.stuck
    collected = drawn(benchmark)
    # The rounds were cut to what each release held: every released label drawn, none drawn again,
    # no HIT handed back; the candidates whose release ran out left the rounds with it.
    assert report.labels_beyond_release == 0 and report.hits_returned == 0
    assert len(collected["tranquil"]) == 4 and len(collected["peaceful"]) == 5
    assert report.labels == report.labels_drawn == sum(len(values) for values in collected.values())
    assert report.candidates_exhausted >= 2
    assert set(Target.objects.filter(benchmark=benchmark).values_list("stage", flat=True)) == {TargetStage.DONE}


def test_a_real_crowds_rounds_are_the_rules_own() -> None:
    """Without a replay the rounds are unbounded: the rule's own sizes (docs/design.md §13)."""
    progress = CandidateProgress(7, CandidateStage.SCORE, 3, 1, 3, 1, "roget")
    rule = StoppingRule(CURTAIL, maximum=10)
    assert labels_missing(progress, step=3, step2_labels=3, step3_labels=0, rule=rule) == 3
    capped = StoppingRule(CURTAIL, maximum=10, available={7: 1})
    assert labels_missing(progress, step=3, step2_labels=3, step3_labels=0, rule=capped) == 1


def test_simulate_crowd_replays_a_file_and_names_what_it_cannot_match(
    tmp_path: Path, release: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = "replay-command"
    benchmark_import(path_or_file=write_swords(tmp_path / "bare.json", with_labels=False), benchmark_name=name)
    call_command("simulate_crowd", name, "--replay", str(release), "--seed", "2", "--json")
    report = json.loads(capsys.readouterr().out)
    assert report["finished"] and report["replay"] == "release.json" and report["stopping_policy"] == "swords"
    assert report["labels"] == Label.objects.filter(candidate__target__benchmark__name=name).count() > 0

    other = tmp_path / "other.json"
    data = json.loads(release.read_text())
    sid = next(s for s, sub in data["substitutes"].items() if sub["substitute"] == "quiet")
    del data["substitutes"][sid], data["substitute_labels"][sid]
    other.write_text(json.dumps(data))
    benchmark_import(path_or_file=write_swords(tmp_path / "bare2.json", with_labels=False), benchmark_name="replay-2")
    with pytest.raises(CommandError, match=r"other.json: 1 candidate\(s\).*candidate 'quiet'"):
        call_command("simulate_crowd", "replay-2", "--replay", str(other))
    with pytest.raises(CommandError, match="drop --honest"):
        call_command("simulate_crowd", "replay-2", "--replay", str(other), "--honest", "3")
    with pytest.raises(CommandError, match="give --honest and --spammers"):
        call_command("simulate_crowd", "replay-2")


def test_the_released_labels_are_keyed_by_target_id_and_substitute(release: Path) -> None:
    labels = released_labels(release)
    text, word, pos, *_ = RELEASE[0]
    tid = target_id(context_id=context_id(text), target=word, offset=text.index(word), pos=pos)
    assert labels[(tid, "placid")] == ("accept", "reject", "reject")
    assert len(labels) == sum(len(subs) for *_, subs in RELEASE)
