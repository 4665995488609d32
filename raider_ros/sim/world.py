"""The simulated household the robot acts in (ROS-free, thread-safe).

:class:`SimWorld` holds the current :class:`Scene`, renders it on demand (cached per world
version) and casts its base laser scan (:mod:`raider_ros.sim.scan`, also cached per version;
:meth:`SimWorld.sensors` gives both of one version), reports the ground truth in benchmark
field names, and executes the robot's skills
(:mod:`raider_ros.sim.skills`): a skill changes the world only when its physical
preconditions hold in the simulated truth, otherwise it fails with the reason.

All state sits behind one lock. Every change (load, setup, successful skill) builds the new
scene completely before it is swapped in and increments :attr:`SimWorld.version`; a failed
load, setup or skill leaves the world exactly as it was.

A skill takes ``skill_duration_s`` of wall time, split into ``skill_steps`` steps; between
steps it reports progress through ``feedback(stage, progress, message)`` (stages
``checking`` -> ``moving`` (move_to) or ``acting`` -> ``done``) and polls ``cancel()``. The
world is changed only at the end, so a cancelled skill leaves it unchanged. The lock is not
held while a skill waits; if the world changed meanwhile, the skill is checked again on the
new world before it is applied.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from raider_ros.common.paths import resolve_scene
from .render import Frame, Renderer
from .scan import LaserModel, ScanData, cast_scan
from .scene import Camera, Robot, Scene, SceneError, apply_setup, load_scene, parse_scene, scene_to_dict
from .skills import SKILLS, SkillFailure, SkillParams, run_skill

log = logging.getLogger(__name__)

Feedback = Callable[[str, float, str], None]


@dataclass(frozen=True)
class SkillResult:
    success: bool
    message: str


def empty_scene() -> Scene:
    return Scene(name="empty", robot=Robot(), camera=Camera(), objects=(), source="<empty world>")


class SimWorld:
    def __init__(self, scene: Scene | Mapping[str, Any] | None = None, *, skill_duration_s: float = 0.0,
                 handover_distance_m: float = 0.5, approach_standoff_m: float = 0.45,
                 skill_steps: int = 10, renderer: Renderer | None = None, laser: LaserModel | None = None,
                 first_version: int = 0):
        for name, value in (("skill_duration_s", skill_duration_s), ("handover_distance_m", handover_distance_m),
                            ("approach_standoff_m", approach_standoff_m)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
                raise ValueError(f"SimWorld: {name} must be a finite number >= 0, got {value!r}")
        if isinstance(skill_steps, bool) or not isinstance(skill_steps, int) or skill_steps < 1:
            raise ValueError(f"SimWorld: skill_steps must be an integer >= 1, got {skill_steps!r}")
        if isinstance(first_version, bool) or not isinstance(first_version, int) or first_version < 0:
            raise ValueError(f"SimWorld: first_version must be an integer >= 0, got {first_version!r}")
        self.skill_duration_s = float(skill_duration_s)
        self.skill_steps = skill_steps
        self.params = SkillParams(approach_standoff_m=float(approach_standoff_m),
                                  handover_distance_m=float(handover_distance_m))
        self.renderer = renderer or Renderer()
        self.laser = laser or LaserModel()
        self._lock = threading.RLock()
        self._scene = self._base = empty_scene()
        self._version = first_version      # the empty world's; every change adds one
        self._frame: Frame | None = None
        self._scan: ScanData | None = None
        if scene is not None:
            self.load(scene)

    # ------------------------------------------------------------------ state
    @property
    def scene(self) -> Scene:
        with self._lock:
            return self._scene

    @property
    def base_scene(self) -> Scene:
        """The scene as last loaded; ``apply_setup(..., reset=True)`` starts from it."""
        with self._lock:
            return self._base

    @property
    def version(self) -> int:
        with self._lock:
            return self._version

    def snapshot(self) -> tuple[Scene, int]:
        with self._lock:
            return self._scene, self._version

    def frame(self) -> Frame:
        """The current view; rendered again only when the world changed."""
        with self._lock:
            if self._frame is None or self._frame.world_version != self._version:
                self._frame = self.renderer.render(self._scene, self._version)
            return self._frame

    def scan(self) -> ScanData:
        """The base laser's current scan (:mod:`raider_ros.sim.scan`); cast again only when the
        world changed."""
        with self._lock:
            if self._scan is None or self._scan.world_version != self._version:
                self._scan = cast_scan(self._scene, self.laser, self.renderer, self._version)
            return self._scan

    def sensors(self) -> tuple[Frame, ScanData]:
        """The camera frame and the laser scan of one world version (taken under one lock)."""
        with self._lock:
            return self.frame(), self.scan()

    def truth(self) -> dict[str, Any]:
        """The simulator truth in benchmark field names (a valid scene document) + ``version``."""
        with self._lock:
            doc = scene_to_dict(self._scene)
            doc["version"] = self._version
            return doc

    # ------------------------------------------------------------------ loading
    def load(self, scene: Scene | Mapping[str, Any]) -> Scene:
        """Replace the world (and the base scene) atomically; SceneError leaves it unchanged."""
        if isinstance(scene, Mapping):
            scene = parse_scene(scene, "<SimWorld.load>")
        if not isinstance(scene, Scene):
            raise SceneError(f"SimWorld.load: expected a Scene or a scene document, got {type(scene).__name__}")
        with self._lock:
            self._swap(scene, base=True)
        return scene

    def load_path(self, path: str | Path) -> Scene:
        """Load a scene file (a path, a file name or a scene name under data/scenes)."""
        return self.load(load_scene(resolve_scene(str(path))))

    def apply_setup(self, setup: Any, reset: bool = True, source: str = "setup") -> Scene:
        """Apply a case's setup block (to the base scene when ``reset``), atomically."""
        with self._lock:
            start = self._base if reset else self._scene
            new = apply_setup(start, setup, source)
            self._swap(new, base=False)
            return new

    def _swap(self, scene: Scene, base: bool) -> None:
        """Build everything for ``scene`` (its frame), then make it current. Caller holds the lock."""
        version = self._version + 1
        try:
            frame = self.renderer.render(scene, version)
        except Exception as exc:  # noqa: BLE001 - a scene the renderer cannot draw is a scene error
            raise SceneError(f"{scene.source}: cannot build the world: {exc}") from exc
        self._scene, self._version, self._frame = scene, version, frame
        if base:
            self._base = scene

    # ------------------------------------------------------------------ skills
    def execute(self, skill: Any, args: Any = (), feedback: Feedback | None = None,
                cancel: Callable[[], bool] | None = None) -> SkillResult:
        """Run one skill; never raises: bad input gives a failed result naming the problem."""
        label = _label(skill, args)
        try:
            return self._execute(skill, args, label, feedback, cancel)
        except Exception as exc:  # noqa: BLE001 - execute reports, it does not raise
            log.exception("skill %s failed unexpectedly", label)
            return SkillResult(False, f"{label} failed: internal error: {type(exc).__name__}: {exc}")

    def _execute(self, skill, args, label, feedback, cancel) -> SkillResult:
        def notify(stage: str, progress: float, message: str) -> None:
            if feedback is None:
                return
            try:
                feedback(stage, float(progress), message)
            except Exception:  # noqa: BLE001 - a broken feedback channel must not break the skill
                log.warning("feedback callback raised during %s", label, exc_info=True)

        def cancelled() -> bool:
            if cancel is None:
                return False
            try:
                return bool(cancel())
            except Exception:  # noqa: BLE001
                log.warning("cancel callback raised during %s; treating it as not cancelled", label, exc_info=True)
                return False

        def fail(message: str) -> SkillResult:
            notify("done", 1.0, message)
            return SkillResult(False, message)

        notify("checking", 0.0, f"checking the preconditions of {label}")
        if cancelled():
            return fail(f"{label} cancelled before it started; the world is unchanged")
        with self._lock:
            scene, version = self._scene, self._version
            try:
                _new, message = run_skill(scene, skill, args, self.renderer, self.params)
            except SkillFailure as exc:
                return fail(str(exc))

        stage = "moving" if str(skill).strip().lower() == "move_to" else "acting"
        steps = self.skill_steps if self.skill_duration_s > 0 else 1
        for k in range(steps):
            if cancelled():
                return fail(f"{label} cancelled at {k / steps:.0%}; the world is unchanged")
            notify(stage, k / steps, f"{label}: {stage}")
            if self.skill_duration_s > 0:
                time.sleep(self.skill_duration_s / steps)
        if cancelled():
            return fail(f"{label} cancelled at 100%; the world is unchanged")

        with self._lock:
            if self._version == version:
                new = _new
            else:  # someone changed the world while the skill ran: check it again on the new one
                try:
                    new, message = run_skill(self._scene, skill, args, self.renderer, self.params)
                except SkillFailure as exc:
                    return fail(f"the world changed during {label}: {exc}")
            self._scene, self._version = new, self._version + 1
        notify("done", 1.0, message)
        return SkillResult(True, message)

    @staticmethod
    def skills() -> list[str]:
        return list(SKILLS)


def _label(skill: Any, args: Any) -> str:
    name = skill if isinstance(skill, str) else repr(skill)
    if isinstance(args, (list, tuple)):
        return f"{name}({', '.join(str(a) for a in args)})"
    return f"{name}({args!r})"
