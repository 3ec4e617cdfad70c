"""REST API for a benchmark's collection settings: the scheme's typed settings, reward, seed and the
distinct-workers rule, read and changed through the service the settings page uses."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import Role, benchmark_for, require
from crowdlex.permissions import IsResearcher
from hits.access import budget_cap_role, settings_role
from hits.models import MAX_BATCH_SEED
from hits.services import SettingsState, benchmark_settings, benchmark_settings_update
from hits.services.settings import MAX_BUDGET_CAP, MAX_REWARD


class SchemeFieldSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    default = serializers.JSONField()
    help = serializers.CharField()


class SettingsSerializer(serializers.Serializer[Any]):
    reward = serializers.DecimalField(max_digits=6, decimal_places=2, help_text="dollars per assignment")
    seed = serializers.IntegerField()
    distinct_workers_per_candidate = serializers.BooleanField()
    scheme_settings = serializers.DictField(
        child=serializers.JSONField(), help_text="every setting of the benchmark's scheme, defaults included"
    )
    scheme_fields = SchemeFieldSerializer(many=True, help_text="the scheme's settings with defaults and meaning")
    locked = serializers.ListField(
        child=serializers.CharField(), help_text="settings that shape collected work, locked once collection started"
    )
    locked_reason = serializers.CharField(help_text='why they are locked, e.g. "batch 3 exists"; "" when not')
    locked_message = serializers.CharField(help_text="why, and what to do instead")
    budget_cap = serializers.DecimalField(
        max_digits=12,
        decimal_places=2,
        allow_null=True,
        help_text="the most the benchmark's work may cost, spent and committed, fees included; null: no cap",
    )


# What ``benchmark_settings_update`` takes, stated for the schema (null or absent: unchanged): a
# reward of whole cents up to MAX_REWARD, as a string or a number, a seed up to MAX_BATCH_SEED.
REWARD_SCHEMA = {
    "anyOf": [
        {"type": "string", "pattern": r"^(?:\d{1,4}(?:\.\d{0,2})?|\.\d{1,2})$"},
        {"type": "integer", "minimum": 0, "maximum": int(MAX_REWARD)},
    ],
    "nullable": True,
}


@extend_schema_field(REWARD_SCHEMA)
class RewardField(serializers.JSONField):
    pass


@extend_schema_field({"type": "integer", "minimum": 0, "maximum": MAX_BATCH_SEED, "nullable": True})
class SeedField(serializers.JSONField):
    pass


@extend_schema_field({"type": "boolean", "nullable": True})
class FlagField(serializers.JSONField):
    pass


@extend_schema_field(
    {
        "anyOf": [
            {"type": "string", "pattern": r"^(?:\d{1,8}(?:\.\d{0,2})?|\.\d{1,2})?$"},
            {"type": "integer", "minimum": 0, "maximum": int(MAX_BUDGET_CAP)},
        ],
        "nullable": True,
    }
)
class BudgetCapField(serializers.JSONField):
    pass


class SettingsInputSerializer(serializers.Serializer[Any]):
    reward = RewardField(
        required=False, allow_null=True, help_text="dollars per assignment, for batches created from now"
    )
    seed = SeedField(required=False, allow_null=True, help_text="the default seed of new batches")
    distinct_workers_per_candidate = FlagField(required=False, allow_null=True)
    scheme_settings = serializers.DictField(
        child=serializers.JSONField(), required=False, help_text="the scheme's settings to change, by name"
    )
    budget_cap = BudgetCapField(
        required=False,
        allow_null=True,
        help_text='money, whole cents, spent and committed in all (docs/design.md §16); "" removes the cap',
    )


def _state(state: SettingsState) -> dict[str, Any]:
    return {
        "reward": state.reward,
        "seed": state.seed,
        "distinct_workers_per_candidate": state.distinct_workers_per_candidate,
        "scheme_settings": state.scheme_settings,
        "scheme_fields": [
            {"name": name, "default": default, "help": text} for name, default, text in state.scheme_fields
        ],
        "locked": state.locked,
        "locked_reason": state.locked_reason,
        "locked_message": state.locked_message,
        "budget_cap": state.budget_cap,
    }


class BenchmarkSettingsApi(APIView):
    """GET: a benchmark's collection settings and which are locked. PATCH: change the ones given;
    400 names each refused setting and why (a bad value, or locked once collection started)."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=SettingsSerializer)
    def get(self, request: Request, name: str) -> Response:
        benchmark = benchmark_for(request.user, name, Role.VIEWER)
        return Response(SettingsSerializer(_state(benchmark_settings(benchmark=benchmark))).data)

    @extend_schema(request=SettingsInputSerializer, responses=SettingsSerializer)
    def patch(self, request: Request, name: str) -> Response:
        benchmark = benchmark_for(request.user, name, Role.EDITOR)
        given = SettingsInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        # A new reward changes what a crowd costs: the owners' (docs/permissions.md).
        state = benchmark_settings(benchmark=benchmark)
        require(request.user, benchmark, settings_role(state, given.validated_data.get("reward")))
        # The cap decides what the crowds may be paid, as the reward does: the owners'.
        require(request.user, benchmark, budget_cap_role(state, given.validated_data.get("budget_cap")))
        try:
            state = benchmark_settings_update(benchmark=benchmark, by=request.user, **given.validated_data)
        except DjangoValidationError as error:
            raise ValidationError(error.message_dict) from error
        return Response(SettingsSerializer(_state(state)).data)
