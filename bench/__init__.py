"""Benchmarks of the platform (``python -m bench`` runs them all; ``--list`` lists them); not tests."""

import os


def django_setup() -> None:
    """Django in this process, with the development settings unless the environment says otherwise
    (DEBUG is off unless set, and then a SECRET_KEY is required)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crowdlex.settings")
    os.environ.setdefault("DEBUG", "1")
    import django

    django.setup()


def figure(name: str, value: float, unit: str, *, goal: float, higher_is_better: bool = False) -> bool:
    """Print one measured figure against its goal on a line of its own (``make bench`` gathers these
    lines into its summary) and say whether the goal is met."""
    met = value >= goal if higher_is_better else value <= goal
    sign = ">=" if higher_is_better else "<="
    print(f"FIGURE {name}: {value:.4g} {unit} (goal {sign} {goal:g} {unit}): {'met' if met else 'MISSED'}", flush=True)
    return met
