"""What one refresh changed (``review.services.benchmark_refresh``), and one computation of the bot
signals (``review.services.benchmark_signals``)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RefreshResult:
    """What one refresh changed; all zeros and empty lists when the benchmark was already current."""

    filtered: int = 0
    unfiltered: int = 0
    flags_raised: int = 0
    flags_resolved: int = 0
    # Evidence rewritten on flags that stay raised (not a change of state: the evidence of a
    # control flag lists the latest failed work).
    flags_updated: int = 0
    blocked: list[int] = field(default_factory=list)
    advanced_targets: list[int] = field(default_factory=list)
    followup_batches: list[int] = field(default_factory=list)
    done_targets: list[int] = field(default_factory=list)
    reopened_targets: list[int] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return any(
            (
                self.filtered,
                self.unfiltered,
                self.flags_raised,
                self.flags_resolved,
                self.blocked,
                self.advanced_targets,
                self.done_targets,
                self.reopened_targets,
            )
        )


@dataclass
class SignalsResult:
    """What one computation of the bot signals changed; ``ran`` is False when another run was busy
    or nothing was pending."""

    ran: bool = False
    assignments: int = 0
    flags_raised: int = 0
    flags_updated: int = 0
    flags_resolved: int = 0
    blocked: list[int] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return any((self.flags_raised, self.flags_updated, self.flags_resolved, self.blocked))
