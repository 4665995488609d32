"""pip install of the ROS-free core: ``pip install .`` (or ``pip install '.[test]'``).

It installs the simulator, perception, agent, recovery, executor and evaluation packages with
their data files (scenes, benchmark, prompts, toolsets, PDDL, knowledge, config) and the
console script ``raider-evaluate``, which scores an LLM or the rules backend on a directory of
benchmark format v1 without ROS (``--mode local``). The ROS adapters (``raider_ros.ros``,
``raider_ros.nodes``) and the ROS-only command-line programs are left out: on a robot, colcon
builds the ROS package from package.xml and CMakeLists.txt and ignores this file.

Dependencies are described once, in requirements/core.txt and requirements/test.txt; the
version once, in package.xml.
"""
import re
import shutil
from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
SHARED_DIRS = ("data", "config")            # installed as raider_ros/share/<dir>
ROS_ONLY = ["raider_ros.ros", "raider_ros.ros.*", "raider_ros.nodes", "raider_ros.nodes.*"]


def requirements(name: str) -> list[str]:
    out = []
    for line in (ROOT / "requirements" / name).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            out.append(line)
    return out


def version() -> str:
    return re.search(r"<version>([^<]+)</version>", (ROOT / "package.xml").read_text()).group(1)


class BuildWithShare(build_py):
    """Copies data/ and config/ into the built package (raider_ros/share/...), where
    raider_ros.common.paths finds them when there is no source tree or ament index."""

    def run(self):
        super().run()
        for sub in SHARED_DIRS:
            target = Path(self.build_lib) / "raider_ros" / "share" / sub
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(ROOT / sub, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


setup(
    name="raider_ros",
    version=version(),
    description="Checks, before a robot acts, whether an action can be carried out (RAIDER); ROS-free core",
    python_requires=">=3.10",
    packages=find_packages(include=["raider_ros", "raider_ros.*"], exclude=ROS_ONLY),
    install_requires=requirements("core.txt"),
    extras_require={"test": requirements("test.txt")},
    entry_points={"console_scripts": ["raider-evaluate=raider_ros.cli.evaluate:main"]},
    cmdclass={"build_py": BuildWithShare},
)
