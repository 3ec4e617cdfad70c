"""A benchmark's collection settings: the scheme's typed settings (``SchemeSettings``), its reward, seed
and the distinct-workers rule, changed in one place for the settings page and the API.

Settings that shape work already collected are locked once collection has started (a batch exists
or a label was collected): the scheme's settings (labels per step, candidates per HIT, the control
threshold...) decide how HITs were cut and how labels count, and the seed decides which HITs a
benchmark's batches hold, so changing them would leave the collected work answering other
questions than the settings say. The reward and the distinct-workers rule only shape batches and
offers still to come, and stay editable. A benchmark that needs other settings starts again as a
new benchmark (imported from the same file), or, for the reward and a batch's own options, in the
next batch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.activity import activity_record
from annotation.models import ActivityKind, Benchmark, Label
from hits.models import MAX_BATCH_SEED, Batch, CrowdLimits
from hits.notifications import benchmark_watch
from schemes import get_scheme
from schemes.base import SchemeSettingsError

# Benchmark fields that shape collected work, besides every scheme setting.
LOCKED_BENCHMARK_FIELDS = ("seed",)
# The largest reward the database column holds (six digits, two decimals).
MAX_REWARD = Decimal("9999.99")
WHAT_TO_DO = (
    "to collect with other values, start a new benchmark from the same data "
    "(or set the reward and a batch's own options on the next batch)"
)


@dataclass(frozen=True)
class SettingsState:
    """A benchmark's collection settings as the page and the API show them, with what is locked and why."""

    reward: Decimal
    seed: int
    distinct_workers_per_candidate: bool
    scheme_settings: dict[str, Any]
    # (name, default, help) of every scheme setting, in the scheme's order.
    scheme_fields: list[tuple[str, Any, str]]
    # Why settings are locked ("batch 3 exists"), or "" while nothing has been collected.
    locked_reason: str
    # The most the benchmark's work may cost, spent and committed (docs/design.md §16); None: no cap.
    budget_cap: Decimal | None = None

    @property
    def locked(self) -> list[str]:
        if not self.locked_reason:
            return []
        return [name for name, _, _ in self.scheme_fields] + list(LOCKED_BENCHMARK_FIELDS)

    @property
    def locked_message(self) -> str:
        if not self.locked_reason:
            return ""
        return (
            f"Collection has started ({self.locked_reason}): the scheme's settings and the seed shape the work "
            f"already collected and are locked; {WHAT_TO_DO}."
        )


def collection_started(*, benchmark: Benchmark) -> str:
    """Why the benchmark's collection counts as started ("batch 3 exists", "labels were collected"), or ""."""
    batch_id = Batch.objects.filter(benchmark=benchmark).order_by("pk").values_list("pk", flat=True).first()
    if batch_id is not None:
        return f"batch {batch_id} exists"
    if Label.objects.filter(candidate__target__benchmark=benchmark, assignment__isnull=False).exists():
        return "labels were collected"
    return ""


def benchmark_settings(*, benchmark: Benchmark) -> SettingsState:
    """The benchmark's collection settings, checked by its scheme, and whether they are locked."""
    scheme = get_scheme(benchmark)
    return SettingsState(
        reward=benchmark.reward,
        seed=benchmark.seed,
        distinct_workers_per_candidate=benchmark.distinct_workers_per_candidate,
        scheme_settings=scheme.settings(benchmark).to_json(),
        scheme_fields=scheme.settings_type.describe(),
        locked_reason=collection_started(benchmark=benchmark),
        budget_cap=CrowdLimits.objects.filter(benchmark=benchmark).values_list("budget_cap", flat=True).first(),
    )


# The largest budget cap the column holds (ten digits, two decimals).
MAX_BUDGET_CAP = Decimal("99999999.99")


def _budget_cap(value: Any) -> Decimal | None:
    """A cap in the crowds' money, whole cents; "" clears it (no cap)."""
    if isinstance(value, str) and not value.strip():
        return None
    try:
        cap = Decimal(str(value).strip())
    except InvalidOperation:
        raise ValueError("must be an amount of money, e.g. 250.00, or empty for no cap") from None
    if not cap.is_finite() or cap < 0:
        raise ValueError("must be an amount of money, at least 0")
    if cap != cap.quantize(Decimal("0.01")):
        raise ValueError("must be whole cents (two decimals at most)")
    if cap > MAX_BUDGET_CAP:
        raise ValueError(f"must be at most {MAX_BUDGET_CAP}")
    return cap.quantize(Decimal("0.01"))


def _reward(value: Any) -> Decimal:
    try:
        reward = Decimal(str(value))
    except InvalidOperation:
        raise ValueError("must be a number of dollars, e.g. 0.10") from None
    if not reward.is_finite() or reward < 0:
        raise ValueError("must be a number of dollars, at least 0")
    if reward != reward.quantize(Decimal("0.01")):
        raise ValueError("must be whole cents (two decimals at most)")
    if reward > MAX_REWARD:
        raise ValueError(f"must be at most {MAX_REWARD}")
    return reward.quantize(Decimal("0.01"))


def _seed(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("must be a whole number")
    if not 0 <= value <= MAX_BATCH_SEED:
        raise ValueError(f"must be between 0 and {MAX_BATCH_SEED}")
    return value


def benchmark_settings_update(
    *,
    benchmark: Benchmark,
    reward: Any = None,
    seed: Any = None,
    distinct_workers_per_candidate: bool | None = None,
    scheme_settings: Mapping[str, Any] | None = None,
    budget_cap: Any = None,
    by: Any = None,
) -> SettingsState:
    """Change the settings given (None: unchanged; ``scheme_settings``: only the names given).

    Every value is checked by its own type: the scheme's settings by its ``SchemeSettings``, the
    reward and seed here. A setting that shapes collected work and would change after collection
    started is refused (see the module docstring); giving it its current value is fine. Errors
    raise ``ValidationError`` with a message per setting name, and nothing is saved. The change
    and its old and new values go to the activity log. ``budget_cap`` (money; "" clears it) is
    never locked: lowering it stops what is not committed yet, and re-arms the 80 % warning.

    Concurrency: runs under the benchmark's row lock, which batch generation takes too, so a
    batch cannot appear between the lock check and the save.
    """
    errors: dict[str, list[str]] = {}
    with transaction.atomic():
        locked = Benchmark.objects.select_for_update(no_key=True).get(pk=benchmark.pk)
        scheme = get_scheme(locked)
        current = scheme.settings(locked).to_json()
        new_scheme = dict(current)
        if scheme_settings is not None:
            try:
                new_scheme = scheme.settings_type.from_json({**current, **scheme_settings}).to_json()
            except SchemeSettingsError as error:
                errors.update(error.message_dict)
        new_values: dict[str, Any] = {}
        for name, value, check in (("reward", reward, _reward), ("seed", seed, _seed)):
            if value is None:
                continue
            try:
                new_values[name] = check(value)
            except ValueError as error:
                errors[name] = [str(error)]
        new_cap: Decimal | None = None
        cap_given = budget_cap is not None
        if cap_given:
            try:
                new_cap = _budget_cap(budget_cap)
            except ValueError as error:
                errors["budget_cap"] = [str(error)]
        if distinct_workers_per_candidate is not None:
            if not isinstance(distinct_workers_per_candidate, bool):
                errors["distinct_workers_per_candidate"] = ["must be true or false"]
            else:
                new_values["distinct_workers_per_candidate"] = distinct_workers_per_candidate
        changed: dict[str, list[Any]] = {
            name: [current[name], value] for name, value in new_scheme.items() if value != current.get(name)
        }
        changed.update(
            {
                name: [getattr(locked, name), value]
                for name, value in new_values.items()
                if value != getattr(locked, name)
            }
        )
        limits = CrowdLimits.objects.select_for_update().filter(benchmark=locked).first()
        old_cap = None if limits is None else limits.budget_cap
        if cap_given and "budget_cap" not in errors and new_cap != old_cap:
            changed["budget_cap"] = [old_cap, new_cap]
        started = collection_started(benchmark=locked)
        if started:
            for name in changed:
                if name in current or name in LOCKED_BENCHMARK_FIELDS:
                    errors.setdefault(name, []).append(
                        f"is locked: collection has started ({started}) and this setting shapes the work "
                        f"collected; {WHAT_TO_DO}"
                    )
        if errors:
            raise ValidationError(errors)
        if "budget_cap" in changed:
            CrowdLimits.objects.update_or_create(
                benchmark=locked, defaults={"budget_cap": new_cap, "budget_warned_at": None}
            )
            # A cap set at or below what is used already warns now (docs/design.md §16).
            benchmark_watch(benchmark=locked)
        if changed:
            for name, value in new_values.items():
                setattr(locked, name, value)
            # Only the settings changed are written: a missing key keeps meaning the scheme's default.
            locked.scheme_settings = {
                **locked.scheme_settings,
                **{name: value for name, value in new_scheme.items() if name in changed},
            }
            locked.full_clean(exclude=["name"])
            locked.save(update_fields=["reward", "seed", "distinct_workers_per_candidate", "scheme_settings"])
            activity_record(
                benchmark=locked,
                kind=ActivityKind.SETTING_CHANGED,
                summary="collection settings changed: "
                + ", ".join(f"{name} {old} → {new}" for name, (old, new) in sorted(changed.items())),
                by=by,
                result={"changed": {name: [str(old), str(new)] for name, (old, new) in changed.items()}},
            )
    benchmark.reward, benchmark.seed = locked.reward, locked.seed
    benchmark.distinct_workers_per_candidate = locked.distinct_workers_per_candidate
    benchmark.scheme_settings = locked.scheme_settings
    return benchmark_settings(benchmark=locked)
