"""Schemes are found, not listed, and their plug-ins of a higher room are found the same way."""

from __future__ import annotations

import importlib.util
import pkgutil

import schemes
from analysis.exports import export_format
from analysis.figures import registered_figures
from schemes import PLUGINS, load_plugins, registered, scheme_package
from tests.schemes.toy import TOY, toy_scheme


def test_every_package_of_schemes_holds_registered_schemes() -> None:
    packages = {found.name for found in pkgutil.iter_modules(schemes.__path__) if found.ispkg} - {"templatetags"}
    # A scheme's module is its package, or a package nested in another scheme's (the generation task).
    assert packages == {type(scheme).__module__.split(".")[1] for scheme in registered()}
    assert {scheme_package(scheme) for scheme in registered()} >= {"schemes.swords", "schemes.swords.proposals"}


def test_the_analysis_room_has_loaded_each_schemes_plugins() -> None:
    loaded = load_plugins("analysis")
    expected = [
        f"{scheme_package(scheme)}.{plugin}"
        for scheme in registered()
        for plugin, room in PLUGINS.items()
        if room == "analysis" and importlib.util.find_spec(f"{scheme_package(scheme)}.{plugin}") is not None
    ]
    assert loaded == expected
    # A nested scheme's plug-in is found in its own package (the proposals page and export).
    assert {"schemes.swords.proposals.figures", "schemes.swords.proposals.exports"} <= set(loaded)
    assert export_format("proposals-csv") is not None
    # Every scheme a benchmark may take reports figures.
    assert {figures.scheme for figures in registered_figures()} >= {"swords", "prolex", "sws"}
    assert load_plugins("review") == []


def test_a_scheme_registered_later_brings_its_plugins_from_its_own_package() -> None:
    with toy_scheme():
        assert {"tests.schemes.toy.figures", "tests.schemes.toy.exports"} <= set(load_plugins("analysis"))
        assert TOY in {figures.scheme for figures in registered_figures()}
        assert export_format("toy-answers-csv") is not None
