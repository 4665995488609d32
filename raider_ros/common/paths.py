"""Where the package's data files (scenes, prompts, toolsets, PDDL, config) live.

In order: ``RAIDER_SHARE_DIR`` when set; the repository root of a source checkout; the
``share`` folder a pip install of the core puts inside the package (setup.py); the ROS
package's ``<prefix>/share/raider_ros`` found through the ament index.
"""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

_REPO_ROOT = Path(__file__).resolve().parents[2]
_PIP_SHARE = Path(__file__).resolve().parents[1] / "share"      # raider_ros/share (pip install)


@lru_cache(maxsize=1)
def share_dir() -> Path:
    env = os.environ.get("RAIDER_SHARE_DIR")
    if env:
        return Path(env)
    if (_REPO_ROOT / "data").is_dir() and (_REPO_ROOT / "package.xml").is_file():
        return _REPO_ROOT
    if (_PIP_SHARE / "data").is_dir():
        return _PIP_SHARE
    try:  # an installed package: ament index
        from ament_index_python.packages import get_package_share_directory
        return Path(get_package_share_directory("raider_ros"))
    except Exception:  # noqa: BLE001 - no ament index: fall back to the source layout
        return _REPO_ROOT


def data_dir() -> Path:
    return share_dir() / "data"


def config_dir() -> Path:
    return share_dir() / "config"


def scenes_dir() -> Path:
    return data_dir() / "scenes"


def resolve_scene(name_or_path: str) -> Path:
    """A scene given as a path, a file name, or a scene name under data/scenes."""
    p = Path(name_or_path).expanduser()
    if p.is_file():
        return p
    for cand in (scenes_dir() / name_or_path, scenes_dir() / f"{name_or_path}.scene.yaml"):
        if cand.is_file():
            return cand
    return p  # let the loader report it as missing, with this path in the message
