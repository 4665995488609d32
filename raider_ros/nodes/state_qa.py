"""state_qa: answers questions about the robot's own state (RACCOON).

Every module publishes a state summary on ``state/summaries`` (raider_ros/msg/StateSummary)
when its state changes; this node keeps the latest of each module and a bounded,
time-indexed past (``SummaryHistory``). Service ``ask_robot`` (raider_ros/srv/AskRobot):
question -> answer, the modules it came from, the summaries quoted as evidence, the backend
and a status; every answer is also published on ``state_qa/answers``. A classifier selects
the modules whose state answers the question; the answer is written from their summaries by
the rules answerer (``rules (no LLM)``: the summaries' facts only) or by an LLM (openai,
scripted) with the summaries as contexts. Core: raider_ros/state_qa (docs/state_qa.md).
"""
from __future__ import annotations

import threading

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from std_msgs.msg import Header

from raider_ros.agent.factory import DetectorSettings, make_backend
from raider_ros.msg import StateAnswer, StateSummary as StateSummaryMsg
from raider_ros.ros.params import Param, declare
from raider_ros.ros.qos import EVENTS, REQUESTS
from raider_ros.ros.spin import StartupError, run_node
from raider_ros.ros.state_summary import SUMMARY_QOS, TOPIC, msg_to_summary, summary_to_msg
from raider_ros.srv import AskRobot
from raider_ros.state_qa.answer import StateQA
from raider_ros.state_qa.modules import StateQAError
from raider_ros.state_qa.summary import SummaryHistory

PARAMS = (
    Param("backend", "rules", "rules (answers from the summaries' facts, no LLM) | openai | scripted"),
    Param("model", "", "openai: model name ('' = $RAIDER_LLM_MODEL, else gpt-4o-2024-05-13)"),
    Param("base_url", "", "openai: endpoint base URL ('' = $RAIDER_LLM_BASE_URL, else the SDK default)"),
    Param("api_key_env", "OPENAI_API_KEY", "openai: name of the environment variable holding the API key"),
    Param("fixture", "", "scripted: file of recorded answers"),
    Param("timeout_s", 30.0, "Time limit of one LLM answer [s]; an LLM that fails or is late gets the rules answer"),
    Param("summaries_topic", TOPIC, "Topic on which every module publishes its state summaries"),
    Param("history_per_module", 50, "Past summaries kept per module (for 'what happened' questions)"),
    Param("history_max_age_s", 0.0, "Past summaries older than this are dropped, each module's latest kept [s]; 0 = no limit"),
    Param("max_question_chars", 2000, "Longer questions are answered with the reason, not read"),
    Param("preload", True, "Load the embedding model and train the module selector at start, not at the first question"),
)


class StateQANode(Node):
    def __init__(self, **kwargs):
        super().__init__("state_qa", **kwargs)
        self.p = declare(self, PARAMS)
        try:
            if self.p["history_per_module"] < 1 or self.p["history_max_age_s"] < 0 or self.p["max_question_chars"] < 1:
                raise ValueError("history_per_module and max_question_chars must be >= 1, history_max_age_s >= 0")
            llm = None if self.p["backend"] == "rules" else make_backend(DetectorSettings(
                backend=self.p["backend"], model=self.p["model"], base_url=self.p["base_url"],
                api_key_env=self.p["api_key_env"], fixture=self.p["fixture"]))
            self.history = SummaryHistory(self.p["history_per_module"], self.p["history_max_age_s"] or None)
            self.qa = StateQA(llm=llm, history=self.history, max_question_chars=self.p["max_question_chars"],
                              llm_timeout_s=self.p["timeout_s"])
        except (ValueError, OSError) as exc:       # StateQAError is a ValueError
            raise StartupError(self.get_name(), str(exc)) from None
        self.received = self.rejected = 0
        self._dirty = threading.Event()
        self._ready = threading.Event()
        self._closing = False
        self.pub_answers = self.create_publisher(StateAnswer, "state_qa/answers", EVENTS)
        self.create_subscription(StateSummaryMsg, self.p["summaries_topic"], self._on_summary, SUMMARY_QOS,
                                 callback_group=MutuallyExclusiveCallbackGroup())
        self.create_service(AskRobot, "ask_robot", self._on_ask, qos_profile=REQUESTS,
                            callback_group=ReentrantCallbackGroup())
        self._worker = threading.Thread(target=self._prepare, name="state-qa-index", daemon=True)
        self._worker.start()
        self.get_logger().info(f"state QA ready: backend {self.qa.backend}, summaries on {self.p['summaries_topic']}")

    # ------------------------------------------------------------------ summaries in
    def _on_summary(self, msg: StateSummaryMsg) -> None:
        try:
            self.history.add(msg_to_summary(msg))
        except StateQAError as exc:
            self.rejected += 1
            self.get_logger().warning(f"state summary ignored: {exc}", throttle_duration_sec=10.0)
            return
        self.received += 1
        self._dirty.set()

    def _prepare(self) -> None:
        """Background work: load the model and the selector (preload), then embed the facts
        of newly arrived summaries so that answers do not wait for it."""
        if self.p["preload"]:
            self.qa.ask("What are you holding?", {})       # loads the model, trains the selector
            _ = self.qa.rules                                # and the answerer's vocabulary
        self._ready.set()
        while not self._closing:
            if not self._dirty.wait(0.5):
                continue
            self._dirty.clear()
            try:
                self.qa.index(self.history, background=True)
            except Exception as exc:  # noqa: BLE001 - indexing is an optimisation; answers still work
                self.get_logger().warning(f"indexing summaries failed: {type(exc).__name__}: {exc}",
                                          throttle_duration_sec=30.0)

    # ------------------------------------------------------------------ questions
    def _on_ask(self, req, res):
        now = self.get_clock().now().nanoseconds * 1e-9
        ans = self.qa.ask(req.question, self.history, now=now)
        evidence = [summary_to_msg(s) for s in ans.evidence]
        res.answer, res.modules, res.evidence = ans.answer, list(ans.modules), evidence
        res.backend, res.status, res.labels, res.note = ans.backend, ans.status, list(ans.labels), ans.note
        res.prompt_tokens_selected, res.prompt_tokens_all = int(ans.prompt_tokens_selected), int(ans.prompt_tokens_all)
        res.elapsed_s = float(ans.elapsed_s)
        self.pub_answers.publish(StateAnswer(
            header=Header(stamp=self.get_clock().now().to_msg()), question=ans.question, answer=ans.answer,
            modules=list(ans.modules), evidence=evidence, backend=ans.backend, status=ans.status,
            labels=list(ans.labels), note=ans.note, prompt_tokens_selected=res.prompt_tokens_selected,
            prompt_tokens_all=res.prompt_tokens_all, elapsed_s=res.elapsed_s))
        self.get_logger().info(f"{ans.question[:120]!r} -> [{ans.status}; {', '.join(ans.modules) or '-'}] "
                               f"{ans.answer[:200]!r} ({ans.elapsed_s * 1000:.0f} ms)")
        return res

    def destroy_node(self):
        self._closing = True
        return super().destroy_node()


def main(args=None) -> int:
    return run_node(StateQANode, args=args)
