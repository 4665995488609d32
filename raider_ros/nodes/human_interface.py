"""human_interface: how the robot talks with a person.

``human/say`` (std_msgs/String): the robot says something. ``human/ask`` (raider_ros/srv/Ask):
ask a question and wait for the answer up to its timeout. Backends: ``terminal`` (a person
types the answer) and ``scripted`` (a scenario file of answers and of the world changes the
person makes; the changes are applied to the simulator with sim/apply_setup, reset false).
Every line of the conversation is also published on ``human/dialogue``.

Every answer is also read as feedback (learning from interaction, docs/memory.md): does the
person correct the robot, complain, or ask it to learn something ("next time, bring me a glass
of water with it")? ``feedback_classifier`` rules reads cue phrases (data/memory/learning.yaml);
an LLM reads it with data/prompts/memory/feedback.yaml, falling back to the rules when it fails.
The verdict goes back in the answer (``feedback_kind``, ``feedback_cue``); the executor sends the
interaction with such an answer to ``memory/learn``.
"""
from __future__ import annotations

import json
import threading

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from std_msgs.msg import String

from raider_ros.agent.factory import DetectorSettings, make_backend
from raider_ros.human.naming import PersonNames
from raider_ros.human.people import ScenarioError, ScriptedHuman, TerminalHuman
from raider_ros.memory.feedback import FeedbackError, LLMFeedbackClassifier, classify_feedback
from raider_ros.ros.params import Param, declare
from raider_ros.ros.qos import LATCHED
from raider_ros.ros.spin import StartupError, run_node
from raider_ros.ros.state_summary import StateSummaryPublisher
from raider_ros.srv import ApplySetup, Ask
from raider_ros.state_qa.summarizers import summarize_dialogue
from raider_ros.state_qa.trackers import DialogueLog

PARAMS = (
    Param("backend", "terminal", "terminal (a person types) | scripted (a scenario file)"),
    Param("scenario", "", "scripted: scenario file, or a name under share/raider_ros/data/scenarios"),
    Param("apply_world_changes", True, "scripted: apply the person's world changes to the simulator"),
    Param("world_change_timeout_s", 10.0, "How long to wait for the simulator to apply a change [s]"),
    Param("names_for_people", True, "Say 'the medicine by the plant' instead of ids (from scene_graph/json)"),
    Param("feedback_classifier", "rules", "How answers are read as feedback (correction, complaint, 'learn that'): "
                                          "rules (cue phrases, no LLM) | openai | scripted"),
    Param("feedback_fixture", "", "feedback_classifier scripted: file of recorded classifier replies"),
)


class HumanInterfaceNode(Node):
    def __init__(self, **kwargs):
        super().__init__("human_interface", **kwargs)
        self.p = declare(self, PARAMS)
        self.pub_dialogue = self.create_publisher(String, "human/dialogue", 20)
        self.summaries, self.dialogue = StateSummaryPublisher(self, min_interval_s=0.2), DialogueLog()  # for state_qa
        self.setup_client = self.create_client(ApplySetup, "sim/apply_setup",
                                               callback_group=MutuallyExclusiveCallbackGroup())
        try:
            if self.p["backend"] == "scripted":
                if not self.p["scenario"]:
                    raise ValueError("the scripted backend needs a scenario (parameter 'scenario')")
                self.human = ScriptedHuman(self.p["scenario"], apply_world_change=self._world_change
                                           if self.p["apply_world_changes"] else None)
            elif self.p["backend"] == "terminal":
                self.human = TerminalHuman()
            else:
                raise ValueError(f"unknown backend {self.p['backend']!r}; known: terminal, scripted")
            self.feedback = None
            if self.p["feedback_classifier"] != "rules":
                self.feedback = LLMFeedbackClassifier(make_backend(DetectorSettings(
                    backend=self.p["feedback_classifier"], fixture=self.p["feedback_fixture"])))
        except (ValueError, ScenarioError, OSError, FeedbackError) as exc:
            raise StartupError(self.get_name(), str(exc)) from None
        group = ReentrantCallbackGroup()
        self._graph_text = ""
        self._names = PersonNames()
        if self.p["names_for_people"]:
            self.create_subscription(String, "scene_graph/json", self._on_graph, LATCHED, callback_group=group)
        self.create_subscription(String, "human/say", self._on_say, 20, callback_group=group)
        self.create_service(Ask, "human/ask", self._on_ask, callback_group=group)

    def _on_graph(self, msg: String) -> None:
        try:
            self._names = PersonNames(json.loads(msg.data).get("graph"))
        except (ValueError, AttributeError):
            self.get_logger().warning("scene_graph/json could not be read: ids are said as they are",
                                      throttle_duration_sec=10.0)

    def _spoken(self, text: str) -> str:
        return self._names.rewrite(text) if self.p["names_for_people"] else text

    def _line(self, who: str, text: str) -> None:
        self.pub_dialogue.publish(String(data=f"{who}: {text}"))
        self.dialogue.add_line(f"{who}: {text}")
        self.summaries.publish(lambda: summarize_dialogue(self.dialogue))

    def _on_say(self, msg: String) -> None:
        text = self._spoken(msg.data)
        self._line("ROBOT", text)
        self.human.say(text)

    def _on_ask(self, req, res):
        question = self._spoken(req.question)
        self._line("ROBOT", question)
        timeout = req.timeout_s if req.timeout_s > 0 else 60.0
        try:
            answer = self.human.ask(question, timeout)
        except Exception as exc:  # noqa: BLE001 - a broken backend must answer, not crash the node
            res.answered, res.message = False, f"{type(exc).__name__}: {exc}"
            return res
        if answer is None:
            res.answered, res.message = False, f"no answer within {timeout:.0f} s"
            self._line("PERSON", "(no answer)")
        else:
            res.answered, res.answer = True, answer
            self._line("PERSON", answer)
            res.feedback_kind, res.feedback_cue = self._read_feedback(answer, question)
        return res

    def _read_feedback(self, answer: str, question: str) -> tuple[str, str]:
        """Is the answer a correction, a complaint or a request to learn? (kind, cue)"""
        if self.feedback is not None:
            try:
                fb = self.feedback.classify(answer, question)
                return fb.kind, fb.cue
            except Exception as exc:  # noqa: BLE001 - an LLM failing: the rules read it instead
                self.get_logger().warning(f"the feedback classifier failed ({type(exc).__name__}: {exc}); "
                                          "reading the answer with the rules", throttle_duration_sec=30.0)
        fb = classify_feedback(answer)
        return fb.kind, fb.cue

    def _world_change(self, setup: dict) -> None:
        """The person changed the world: tell the simulator (blocking, from a service thread)."""
        if not self.setup_client.wait_for_service(timeout_sec=self.p["world_change_timeout_s"]):
            self.get_logger().error("sim/apply_setup is not available: the person's change is lost")
            return
        done = threading.Event()
        future = self.setup_client.call_async(ApplySetup.Request(setup_yaml=json.dumps(setup), reset=False))
        future.add_done_callback(lambda _f: done.set())
        if not done.wait(self.p["world_change_timeout_s"]) or not future.result().success:
            why = future.result().message if future.done() and future.result() else "no answer"
            self.get_logger().error(f"the simulator did not take the person's change {setup}: {why}")
            return
        self._line("WORLD", self._spoken(f"the person {_describe(setup)}"))


def _describe(setup: dict) -> str:
    parts = []
    for oid, patch in (setup.get("objects") or {}).items():
        parts.append(f"moved {oid}" if "center" in patch else f"changed {oid}")
    for pid, patch in (setup.get("people") or {}).items():
        if "name" in patch:
            parts.append(f"{pid} is now known as {patch['name']}")
        for k, v in (patch.get("state") or {}).items():
            parts.append(f"{pid} {k.replace('_', ' ')}: {v}")
    return ", ".join(parts) or "changed the world"


def main(args=None) -> int:
    return run_node(HumanInterfaceNode, args=args)
