"""The state_qa node in a private Context: summaries in on state/summaries (from a publisher that
started before it, through the helper every node uses), answers out of ask_robot and on
state_qa/answers; an empty question, a 100 kB question, a module that has published nothing and
a malformed summary get clear answers, not errors; an LLM backend (recorded replies) answers
and a failing one falls back to the rules."""
from __future__ import annotations

import threading

import pytest
import yaml
from rclpy.node import Node

from raider_ros.msg import StateAnswer, StateSummary as StateSummaryMsg
from raider_ros.nodes.state_qa import StateQANode
from raider_ros.ros.qos import EVENTS
from raider_ros.ros.state_summary import SUMMARY_QOS, TOPIC, StateSummaryPublisher
from raider_ros.srv import AskRobot
from raider_ros.state_qa.summarizers import summarize_generic, summarize_robot
from raider_ros.state_qa.trackers import SkillLog
from support.ros import call, params, private_context, spinning, wait_until

FIRST_ANSWER_S = 180.0     # the first answer may wait for the embedding model and the selector


class Robot(Node):
    """Publishes what sim_world and a safety monitor would, through the nodes' helper."""

    def __init__(self, context):
        super().__init__("fake_robot", context=context)
        self.summaries = StateSummaryPublisher(self, min_interval_s=0.0)
        self.raw = self.create_publisher(StateSummaryMsg, TOPIC, SUMMARY_QOS)
        self.skills = SkillLog()

    def state(self, holding):
        robot = {"x": 1.5, "y": 0.2, "yaw_deg": 90.0, "holding": holding, "reach": 1.1}
        return summarize_robot(robot, skills=["move_to", "pick", "handover"], skill_log=self.skills)


class Listener(Node):
    def __init__(self, context):
        super().__init__("answers_listener", context=context)
        self.answers: list[StateAnswer] = []
        self.create_subscription(StateAnswer, "state_qa/answers", self.answers.append, EVENTS)


def _ask(client, question, timeout=60.0):
    return call(client, AskRobot.Request(question=question), timeout)


def test_summaries_in_answers_out_and_bad_inputs_answered():
    with private_context() as ctx:
        robot = Robot(ctx)
        robot.skills.record("pick", ["Medicine_1"], True, "picked Medicine_1")
        assert robot.summaries.publish(robot.state("Medicine_1")) == 1
        robot.summaries.publish(summarize_generic("safety_monitor", {"constraints": ["never enter the bathroom"],
                                                                     "violations": []}))
        # the state_qa node starts after the summaries were published: the topic keeps them
        qa = StateQANode(context=ctx)
        listener = Listener(ctx)
        client = listener.create_client(AskRobot, "ask_robot")
        with spinning(ctx, robot, qa, listener):
            wait_until(lambda: qa.received >= 2, 30.0, what="the summaries published before the node started")
            r = _ask(client, "What are you holding?", FIRST_ANSWER_S)
            assert r.status == "ok" and "Medicine_1" in r.answer, (r.status, r.answer)
            assert r.backend == "rules (no LLM)" and "robot" in r.modules
            assert [e.module for e in r.evidence] == ["robot"] and any(f.value == "Medicine_1" for f in r.evidence[0].facts)
            assert r.elapsed_s > 0 and r.prompt_tokens_selected < r.prompt_tokens_all

            # the state changes: the next answer follows it
            robot.skills.record("handover", ["Medicine_1", "Person_1"], True, "handed Medicine_1 to Person_1")
            robot.summaries.publish(lambda: robot.state(None))
            wait_until(lambda: qa.received >= 3, 30.0, what="the changed robot summary")
            r = _ask(client, "What are you holding?")
            assert "nothing" in r.answer.lower(), r.answer

            r = _ask(client, "Which safety constraints do you follow?")
            assert "bathroom" in r.answer and "safety_monitor" in r.modules, (r.answer, r.modules)

            # bad questions: clear answers with status invalid
            r = _ask(client, "")
            assert r.status == "invalid" and r.answer and not r.modules
            r = _ask(client, "   \t ")
            assert r.status == "invalid"
            r = _ask(client, "why? " * 20_000)                     # 100 kB
            assert r.status == "invalid" and "100000 characters" in r.answer, r.answer

            # a module that has published nothing yet
            r = _ask(client, "What did the person answer when you asked her name?")
            assert r.status in ("no_state", "partial"), (r.status, r.answer)
            assert "not reported anything" in r.answer or "don't know" in r.answer.lower(), r.answer

            # a malformed summary is ignored with a warning; the node keeps answering
            robot.raw.publish(StateSummaryMsg(module="", source="broken", text="x"))
            wait_until(lambda: qa.rejected >= 1, 30.0, what="the malformed summary to be refused")
            r = _ask(client, "What are you holding?")
            assert r.status == "ok"

            wait_until(lambda: len(listener.answers) >= 8, 30.0, what="every answer on state_qa/answers")
            first = listener.answers[0]
            assert first.question == "What are you holding?" and "Medicine_1" in first.answer
            assert first.backend == "rules (no LLM)" and list(first.modules) == ["robot"]


def _fixture(tmp_path, replies):
    f = tmp_path / "qa_fixture.yaml"
    f.write_text(yaml.safe_dump({"format": "raider-llm-script/1", "name": "qa", "responses": replies}))
    return str(f)


@pytest.mark.parametrize("reply, status, backend, expect", [
    ("Thought: the robot context says holding Medicine_1.\nFinal answer: I am holding Medicine_1.",
     "ok", "scripted:qa", "I am holding Medicine_1."),
    ({"error": "HTTP 500"}, "fallback", "rules (no LLM)", "Medicine_1"),
])
def test_llm_backend_answers_and_falls_back_to_the_rules(tmp_path, reply, status, backend, expect):
    with private_context() as ctx:
        robot = Robot(ctx)
        robot.summaries.publish(robot.state("Medicine_1"))
        qa = StateQANode(context=ctx, parameter_overrides=params(backend="scripted", fixture=_fixture(tmp_path, [reply]),
                                                                 preload=False))
        client = robot.create_client(AskRobot, "ask_robot")
        with spinning(ctx, robot, qa):
            wait_until(lambda: qa.received >= 1, 30.0, what="the robot summary")
            r = _ask(client, "What are you holding?", FIRST_ANSWER_S)
            assert r.status == status and r.backend == backend and expect in r.answer, (r.status, r.backend, r.answer)
            if status == "fallback":
                assert "HTTP 500" in r.note


def test_bad_parameters_stop_the_node_with_the_reason():
    from raider_ros.ros.spin import StartupError
    with private_context() as ctx:
        with pytest.raises(StartupError, match="fixture"):
            StateQANode(context=ctx, parameter_overrides=params(backend="scripted", fixture=""))
        with pytest.raises(StartupError, match="history_per_module"):
            StateQANode(context=ctx, parameter_overrides=params(history_per_module=0))
