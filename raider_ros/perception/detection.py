"""Object detection backends.

A backend turns an RGB image (and, for the simulator, its instance-id image) into
:class:`~raider_ros.perception.types.Detection` values. Backends are made by name with
:func:`make_detector`, so a learned detector (e.g. open-vocabulary boxes + promptable masks, as
the paper used on real images) can be registered later with :func:`register_detector`.

``sim``: :class:`SimInstanceDetector` reads the simulator's per-pixel instance ids and their
labels, the way the paper used AI2-THOR's instance masks. It never looks at the world itself.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Protocol

import numpy as np

from .types import Detection


class DetectorBackend(Protocol):
    name: str

    def detect(self, rgb: np.ndarray, *, instance: np.ndarray | None = None,
               labels: Mapping[int, tuple[str, str]] | None = None) -> list[Detection]:
        ...


class DetectionError(ValueError):
    """Input a detector cannot work with (wrong shapes, missing instance image, ...)."""


def mask_bbox(mask: np.ndarray) -> tuple[int, int, int, int]:
    """Inclusive (u_min, v_min, u_max, v_max) of a non-empty boolean mask."""
    rows = np.flatnonzero(mask.any(axis=1))
    cols = np.flatnonzero(mask.any(axis=0))
    return int(cols[0]), int(rows[0]), int(cols[-1]), int(rows[-1])


class SimInstanceDetector:
    """Detections from the simulator's instance-id image.

    One detection per label id present with at least ``min_pixels`` pixels; id 0 (floor or
    nothing) and ids without a label are ignored. Score 1.0.
    """

    name = "sim"

    def __init__(self, min_pixels: int = 1):
        if int(min_pixels) < 1:
            raise ValueError(f"min_pixels must be >= 1, got {min_pixels!r}")
        self.min_pixels = int(min_pixels)

    def detect(self, rgb: np.ndarray, *, instance: np.ndarray | None = None,
               labels: Mapping[int, tuple[str, str]] | None = None) -> list[Detection]:
        if instance is None or labels is None:
            raise DetectionError("the sim detector needs the instance-id image and its labels")
        instance = np.asarray(instance)
        if instance.ndim != 2:
            raise DetectionError(f"instance image must be (H, W), got shape {instance.shape}")
        if rgb is not None and np.asarray(rgb).shape[:2] != instance.shape:
            raise DetectionError(f"rgb {np.asarray(rgb).shape[:2]} and instance {instance.shape} sizes differ")
        ids, counts = np.unique(instance, return_counts=True)
        out: list[Detection] = []
        for inst, count in zip(ids.tolist(), counts.tolist()):
            if inst == 0 or inst not in labels or count < self.min_pixels:
                continue
            name, label = labels[inst]
            mask = instance == inst
            out.append(Detection(label=str(label), name=str(name), instance_id=int(inst),
                                 bbox=mask_bbox(mask), mask=mask, score=1.0))
        return out


_REGISTRY: dict[str, Callable[..., DetectorBackend]] = {"sim": SimInstanceDetector}


def register_detector(name: str, factory: Callable[..., DetectorBackend]) -> None:
    """Make ``make_detector(name, **params)`` build detectors with ``factory(**params)``."""
    _REGISTRY[name] = factory


def detector_names() -> list[str]:
    return sorted(_REGISTRY)


def make_detector(name: str, **params: Any) -> DetectorBackend:
    if name not in _REGISTRY:
        raise ValueError(f"unknown detector backend {name!r}; known: {', '.join(detector_names())}")
    try:
        return _REGISTRY[name](**params)
    except TypeError as exc:
        raise ValueError(f"detector backend {name!r}: bad parameters {params!r}: {exc}") from None
