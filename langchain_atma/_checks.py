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
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or value < 0:
        raise ConfigError(f"{name} must be a finite number >= 0 or None, got {value!r}")
    return float(value)
