"""An object's colour from the image: the RGB pixels under its mask, named after the nearest
reference colour of data/perception/colour_names.yaml.

The naming allows for the light falling on the object (raider_ros/common/colour.py): the name is
the reference colour with the smallest :func:`colour_cost`; the measurement takes the mean of the
mask's brighter pixels (the upper quarter by brightness, the faces that catch the light).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from raider_ros.common.colour import colour_cost
from raider_ros.common.paths import data_dir
from raider_ros.common.yamlfile import read_yaml_mapping

BRIGHT_QUANTILE = 75.0          # pixels at or above this brightness percentile are measured
MIN_PIXELS = 5                  # fewer mask pixels: no colour


@dataclass(frozen=True)
class ColourName:
    name: str
    rgb: tuple[float, float, float]
    words: tuple[str, ...]
    near: tuple[str, ...] = ()


class ColourError(ValueError):
    """A colour table that cannot be used; the message names the file and the entry."""


def colour_file() -> Path:
    return data_dir() / "perception" / "colour_names.yaml"


@lru_cache(maxsize=4)
def load_colours(path: str | None = None) -> tuple[ColourName, ...]:
    doc, p = read_yaml_mapping(Path(path) if path else colour_file(), what="colour table", error=ColourError)
    table = doc.get("colours")
    if not isinstance(table, dict) or not table:
        raise ColourError(f"{p}: colours: expected a mapping of name -> {{rgb, words}}")
    out = []
    for name, spec in table.items():
        where = f"{p}: colours.{name}"
        if not isinstance(spec, dict):
            raise ColourError(f"{where}: expected {{rgb, words, near}}")
        rgb = spec.get("rgb")
        if not (isinstance(rgb, list) and len(rgb) == 3 and all(isinstance(x, (int, float)) and 0 <= x <= 1 for x in rgb)):
            raise ColourError(f"{where}.rgb: expected three numbers in 0..1, got {rgb!r}")
        words = spec.get("words") or [name]
        near = spec.get("near") or []
        if not all(isinstance(w, str) for w in [*words, *near]):
            raise ColourError(f"{where}: words and near must be lists of words")
        out.append(ColourName(str(name), tuple(float(x) for x in rgb), tuple(w.lower() for w in words),
                              tuple(str(n) for n in near)))
    names = {c.name for c in out}
    for c in out:
        unknown = [n for n in c.near if n not in names]
        if unknown:
            raise ColourError(f"{p}: colours.{c.name}.near: unknown colour(s) {', '.join(unknown)}")
    return tuple(out)


def measure_rgb(rgb: np.ndarray, mask: np.ndarray) -> tuple[float, float, float] | None:
    """Mean colour (0..1) of the brighter pixels of ``rgb`` (H, W, 3, uint8 or 0..1 floats)
    under ``mask``; None for fewer than MIN_PIXELS pixels or a mismatched image."""
    img = np.asarray(rgb)
    m = np.asarray(mask, dtype=bool)
    if img.ndim != 3 or img.shape[2] < 3 or img.shape[:2] != m.shape or int(m.sum()) < MIN_PIXELS:
        return None
    px = img[m][:, :3].astype(np.float64)
    if img.dtype == np.uint8 or px.max(initial=0.0) > 1.0:
        px /= 255.0
    lum = px.mean(axis=1)
    bright = px[lum >= np.percentile(lum, BRIGHT_QUANTILE)]
    mean = bright.mean(axis=0) if len(bright) else px.mean(axis=0)
    return tuple(float(round(x, 3)) for x in mean)


def name_colour(rgb, colours: tuple[ColourName, ...] | None = None) -> str | None:
    """The name of the reference colour nearest to ``rgb`` (0..1), allowing for the light."""
    if rgb is None:
        return None
    table = colours if colours is not None else load_colours()
    v = np.asarray(rgb, dtype=np.float64)
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        return None
    best = min(table, key=lambda c: colour_cost(v, c.rgb))
    return best.name


def colour_words(colours: tuple[ColourName, ...] | None = None) -> dict[str, str]:
    """Every word for a colour -> the colour's name ("gray" -> "grey")."""
    table = colours if colours is not None else load_colours()
    return {w: c.name for c in table for w in c.words}
