"""Small argument checks shared by the package's entry points (private)."""

from __future__ import annotations

import math

from langchain_atma.errors import ConfigError


def optional_non_negative(value: object, name: str) -> float | None:
    """``value`` as a float when it is a finite number >= 0; ``None`` stays ``None``.

    Raises:
        ConfigError: for anything else (a bool, a string, NaN, inf, a negative number).

    Example:
        >>> optional_non_negative(0.1, "margin")
        0.1
    """
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
    ):
        raise ConfigError(f"{name} must be a finite number >= 0 or None, got {value!r}")
    return float(value)


def positive_int(value: object, name: str) -> int:
    """``value`` when it is an int >= 1 (not a bool).

    Raises:
        ConfigError: for anything else.

    Example:
        >>> positive_int(4000, "max_chars")
        4000
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{name} must be a positive int, got {value!r}")
    return value
