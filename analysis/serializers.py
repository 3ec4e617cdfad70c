"""The shapes of the statistics that schemes share, for the API and its schema: the telemetry
signals every scheme reports, and the statistics of a scheme that judges candidates (Table 2 of
SWORDS, docs/design.md §7). A scheme's figures name their serializer (``SchemeFigures.serializer``);
this module sits outside ``analysis.api`` so that a scheme's plug-in may import it before the URLs
are read."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers


class PerTargetSerializer(serializers.Serializer[Any]):
    candidates = serializers.FloatField(allow_null=True)
    inconceivable = serializers.FloatField(allow_null=True)
    conceivable = serializers.FloatField(allow_null=True)
    acceptable = serializers.FloatField(allow_null=True)


class PerTargetNonemptySerializer(PerTargetSerializer):
    targets = serializers.DictField(child=serializers.IntegerField(), help_text="targets having each category")


class HistogramSerializer(serializers.Serializer[Any]):
    bins = serializers.ListField(child=serializers.CharField(), help_text='"0", then (i/10, (i+1)/10]')
    counts = serializers.ListField(child=serializers.IntegerField())


class SourceGroupSerializer(serializers.Serializer[Any]):
    candidates = serializers.IntegerField()
    share = serializers.FloatField()
    labels = serializers.IntegerField()
    mean_score = serializers.FloatField(allow_null=True)
    inconceivable = serializers.IntegerField()
    conceivable = serializers.IntegerField()
    acceptable = serializers.IntegerField()
    score_histogram = HistogramSerializer()


class PosGroupSerializer(serializers.Serializer[Any]):
    targets = serializers.IntegerField()
    candidates = serializers.IntegerField()
    labels = serializers.IntegerField()
    per_target = PerTargetSerializer()
    per_target_nonempty = PerTargetNonemptySerializer()


class InteractionSignalSerializer(serializers.Serializer[Any]):
    assignments = serializers.IntegerField()
    share = serializers.FloatField(allow_null=True, help_text="of the assignments with telemetry")


class InteractionSerializer(serializers.Serializer[Any]):
    """Assignments whose telemetry shows each signal by itself (review.interaction, docs/quality.md)."""

    assignments = serializers.IntegerField(help_text="submitted work that counts (crowd work once confirmed)")
    with_telemetry = serializers.IntegerField()
    signals = serializers.DictField(
        child=InteractionSignalSerializer(), help_text="pasted, away, no_input, uniform_timing"
    )


class AggregationSummarySerializer(serializers.Serializer[Any]):
    """A worker-aware model's posteriors beside the score (docs/design.md §13), when asked for."""

    method = serializers.CharField()
    prior = serializers.FloatField(help_text="estimated share of acceptable items")
    iterations = serializers.IntegerField()
    converged = serializers.BooleanField()
    controls = serializers.IntegerField(help_text="control answers used as known answers")
    workers = serializers.IntegerField()
    mean_reliability = serializers.FloatField(allow_null=True)
    acceptable_by_posterior = serializers.IntegerField(help_text="candidates whose posterior is above 0.5")
    acceptable_by_score = serializers.IntegerField()
    acceptable_by_both = serializers.IntegerField()
    per_target_acceptable_by_posterior = serializers.FloatField(allow_null=True)
    mean_posterior = serializers.FloatField(allow_null=True)


class StatisticsSerializer(serializers.Serializer[Any]):
    """The statistics of a scheme that judges candidates (Table 2 of SWORDS: counts, per-target means,
    categories by source and part of speech); its figures name it as their serializer."""

    scheme = serializers.CharField()
    benchmark = serializers.CharField()
    interaction = InteractionSerializer()
    contexts = serializers.IntegerField()
    targets = serializers.IntegerField()
    candidates = serializers.IntegerField()
    labels = serializers.IntegerField(help_text="valid labels, abstain included")
    unscored_candidates = serializers.IntegerField(help_text="candidates without a valid label")
    per_target = PerTargetSerializer(help_text="means over all targets")
    per_target_nonempty = PerTargetNonemptySerializer(help_text="means over the targets having the category")
    abstain_share = serializers.FloatField(allow_null=True)
    accept_share = serializers.FloatField(allow_null=True)
    thresholds = serializers.DictField(child=serializers.FloatField())
    by_pos = serializers.DictField(child=PosGroupSerializer())
    by_source = serializers.DictField(
        child=SourceGroupSerializer(),
        help_text="coinco-only, both, thesaurus-only (roget counts), crowd-only (proposed here), other",
    )
    reannotation_origin = serializers.CharField(allow_null=True)
    aggregation = AggregationSummarySerializer(
        required=False, help_text="present when ?aggregation= names a model (dawid_skene or mace)"
    )


__all__ = ["InteractionSerializer", "StatisticsSerializer"]
