"""The paper's own recorded GPT-4o outputs (Appendix D, the assistive plan of Fig. 17) replayed
by the scripted backend through the real flow manager, prompt and tools on the assistive scene:
the verdicts of Fig. 17 come out. The recording is quoted as the paper prints it (escaped
underscores, "Final response:" inside the JSON, no grounding field); the parser copes."""
from __future__ import annotations

from pathlib import Path

import pytest

from raider_ros.agent.factory import DetectorSettings, build_detector
from raider_ros.common.tool_contract import tool_catalogue
from raider_ros.human.people import ScriptedHuman
from raider_ros.perception.pipeline import PerceptionPipeline
from raider_ros.perception.provider import TruthProvider
from raider_ros.perception.scene_graph import SceneGraph
from raider_ros.perception.toolbox import ToolBox
from raider_ros.common.paths import resolve_scene
from raider_ros.sim.scene import load_scene
from raider_ros.sim.world import SimWorld

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "llm" / "appendix_d.yaml"


class World:
    """The assistive room with perception, moved through the plan as the person of the demo
    scenario changes it (data/scenarios/assistive_demo.yaml)."""

    def __init__(self):
        self.sim = SimWorld()
        self.sim.load(load_scene(resolve_scene("assistive_room")))
        self.perception, self.provider, self.graph = PerceptionPipeline("sim"), TruthProvider(), SceneGraph()
        self.tools = ToolBox(self.graph, self.provider)
        self.person = ScriptedHuman("assistive_demo", apply_world_change=lambda s: self.sim.apply_setup(s, reset=False))
        self.detector = build_detector(DetectorSettings(backend="scripted", fixture=str(FIXTURE),
                                                        toolset="assistive", reach_m=0.5), self.tools)
        self.refresh()

    def refresh(self):
        frame, robot = self.sim.frame(), self.sim.scene.robot
        self.provider.update(self.sim.truth())
        self.graph.update(self.perception.process(frame.rgb, frame.depth, frame.instance, frame.labels, frame.camera,
                                                  robot_xy=(robot.x, robot.y)), self.provider)

    def check(self, query: str, context: str | None = None):
        self.refresh()
        return self.detector.run(query, context)

    def act(self, skill: str, *args: str):
        res = self.sim.execute(skill, list(args))
        assert res.success, res.message
        self.refresh()


@pytest.fixture(scope="module")
def runs():
    w = World()
    out = {"approach counter": w.check("approach medicine_counter")}
    w.person.ask("Could you move the chair out of the way, please?")          # the person clears the path
    w.act("move_to", "MedicineCounter_1")
    out["pick"] = w.check("pick adrianas_medicine medicine_counter")
    out["pick, closest to the plant"] = w.check("pick adrianas_medicine medicine_counter",
                                                "It's the medicine that is closest to the plant.")
    w.person.ask("I cannot reach the medicine. Could you bring it closer to me?")
    w.act("pick", "Medicine_1")
    out["approach adriana"] = w.check("approach adriana_user")
    w.person.ask("Could you tell me who you are?")
    w.act("move_to", "Person_1")
    out["handover"] = w.check("handover adrianas_medicine adriana_user")
    return out


FIG_17 = {"approach counter": "unfeasibility", "pick": "ambiguity", "pick, closest to the plant": "unfeasibility",
          "approach adriana": "unfeasibility", "handover": "unfeasibility"}


@pytest.mark.parametrize("step", list(FIG_17))
def test_the_recorded_run_gives_the_verdict_of_fig_17(runs, step):
    res = runs[step]
    assert res.status == "ok", res.error
    assert res.issue == FIG_17[step] and res.explanation
    assert not res.warnings, [w.message for w in res.warnings]      # every recorded call was understood


def test_the_recorded_tool_calls_ran_on_our_tools(runs):
    names = [c.name for r in runs.values() for c in r.tool_calls]
    assert names and set(names) <= set(tool_catalogue())              # "call\\_tool", "check\\_free\\_path" read right
    asked = [c.name for c in runs["handover"].tool_calls if c.turn > 0]     # the model's own calls
    assert asked == ["robot_holding", "recognize_humans", "detect_human_gaze", "human_hands_free", "dist_robot_to_human"]
    gaze = next(c for c in runs["handover"].tool_calls if c.name == "detect_human_gaze")
    assert gaze.success, gaze.result                                  # "Adriana" resolved to the person
def test_missing_grounding_is_taken_from_the_tool_calls(runs):
    assert runs["approach counter"].grounding == ["MedicineCounter_1"]
    assert "Medicine_1" in runs["pick, closest to the plant"].grounding
    assert "Person_1" in runs["handover"].grounding
