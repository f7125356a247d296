"""Rerun one evaluation per value of a setting: does a weight earn its place?"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from trawl.errors import ConfigError
from trawl.settings import Settings

Evaluation = Callable[[Settings], dict[str, float]]


def sweep(
    evaluation: Evaluation, settings: Settings, name: str, values: list[str]
) -> list[tuple[str, dict[str, float]]]:
    """(value, metrics) per value, in the order given; bad names or values, or a value
    given twice, raise ConfigError before anything runs."""
    repeated = sorted(value for value, n in Counter(values).items() if n > 1)
    if repeated:
        raise ConfigError(f"{name}: value given twice: {', '.join(repeated)}")
    variants = [(value, settings.replace(**{name: value})) for value in values]
    return [(value, evaluation(variant)) for value, variant in variants]
