"""How far a measured colour is from a reference colour, allowing for the light.

The renderer (and a camera) shows an object's colour times the light falling on it, so the same
white plate looks light grey in shade. The cost compares the measurement with the reference
scaled by a light factor k within [LIGHT_MIN, LIGHT_MAX], preferring k near LIGHT_TYPICAL:
``|measured - k * reference| + LIGHT_WEIGHT * |k - LIGHT_TYPICAL|`` in a space of lightness and
two opponent axes (red-green, yellow-blue), where hue counts more than lightness, which the light
blurs. Perception names colours with it (perception/colour.py); the rules reasoner compares a
measured colour with a colour word's own shade ("mauve", "celadon") with it.
"""
from __future__ import annotations

import numpy as np

LIGHT_MIN, LIGHT_MAX, LIGHT_TYPICAL = 0.55, 1.05, 0.8
LIGHT_WEIGHT = 0.3
LIGHTNESS_WEIGHT, CHROMA_WEIGHT = 1.0, 1.5

_OPPONENT = np.array([[1 / 3, 1 / 3, 1 / 3], [1.0, -1.0, 0.0], [0.5, 0.5, -1.0]]) \
    * np.array([[LIGHTNESS_WEIGHT], [CHROMA_WEIGHT], [CHROMA_WEIGHT]])


def colour_cost(measured, reference) -> float:
    """The distance of ``measured`` (RGB 0..1) from ``reference`` under the best light factor."""
    m = _OPPONENT @ np.asarray(measured, dtype=np.float64)
    r = _OPPONENT @ np.asarray(reference, dtype=np.float64)
    denom = float(r @ r)
    k = float(m @ r) / denom if denom > 0 else LIGHT_TYPICAL
    k = min(max(k, LIGHT_MIN), LIGHT_MAX)
    return float(np.linalg.norm(m - k * r)) + LIGHT_WEIGHT * abs(k - LIGHT_TYPICAL)
