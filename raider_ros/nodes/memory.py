"""memory: the robot's episodic memory of interaction examples (learning from interaction, after
Bärmann et al., ARMAR-6), kept in one SQLite file.

Services: ``memory/list`` and ``memory/get`` (what the robot knows and has learned),
``memory/forget`` (undo a wrong lesson), ``memory/retrieve`` (the top-k examples for the current
interaction: the recovery planner's few-shot examples and lessons), ``memory/plan_task`` (a
request's plan from the examples: the best lesson like it, else the task's seed; used by the
executor) and ``memory/learn`` (an interaction and the person's feedback -> a stored lesson, or
the reason none was stored, as a sentence for the person). ``memory/status`` (latched) says
whether the node learns, which file it uses and why not.

A database file that is corrupt, locked by another process or of another schema does not stop
the node: it logs the reason, publishes it on ``memory/status`` and runs on WITHOUT learning,
answering from the seed examples (data/memory/seed_examples.yaml) in memory. Lessons are bound
to the scene from ``sim/get_ground_truth`` (or the scene a caller passes). The core is
raider_ros/memory (docs/memory.md); this node only converts messages.
"""
from __future__ import annotations

import json
import threading

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from std_msgs.msg import String

from raider_ros.agent.factory import DetectorSettings, make_backend
from raider_ros.executor.task import TaskError, parse_roles
from raider_ros.memory.adapt import SceneIndex
from raider_ros.memory.episode import Episode, EpisodeError
from raider_ros.memory.feedback import FeedbackError, LLMFeedbackClassifier
from raider_ros.memory.interaction import Interaction, InteractionError
from raider_ros.memory.learning import LLMImprover
from raider_ros.memory.seeds import SeedError
from raider_ros.memory.service import MemoryService, scene_from_json
from raider_ros.memory.store import EpisodicMemoryError, UnknownEpisode
from raider_ros.memory.tasks import TaskPlanError
from raider_ros.msg import MemoryEpisode, RecoveryStep
from raider_ros.recovery.plan import Var
from raider_ros.ros.memory_client import GroundTruthScene
from raider_ros.ros.params import Param, declare
from raider_ros.ros.qos import LATCHED
from raider_ros.ros.spin import StartupError, run_node
from raider_ros.srv import MemoryForget, MemoryGet, MemoryLearn, MemoryList, MemoryPlanTask, MemoryRetrieve

PARAMS = (
    Param("database", "", "SQLite file of the memory ('' = $XDG_DATA_HOME/raider_ros/memory.sqlite, by default "
                          "~/.local/share/raider_ros/memory.sqlite; ':memory:' keeps nothing)"),
    Param("seeds", "default", "Prior examples: default (share/raider_ros/data/memory/seed_examples.yaml) | none | "
                              "a seed file"),
    Param("learning", True, "Learn lessons from the person's feedback and allow forgetting (false: read only)"),
    Param("busy_timeout_s", 2.0, "How long a write waits for another process's lock on the file [s]"),
    Param("improver", "rules", "Who writes a lesson: rules (no LLM) | openai | scripted"),
    Param("model", "", "openai: model name ('' = $RAIDER_LLM_MODEL, else gpt-4o-2024-05-13)"),
    Param("base_url", "", "openai: endpoint base URL ('' = $RAIDER_LLM_BASE_URL, else the SDK default)"),
    Param("api_key_env", "OPENAI_API_KEY", "openai: name of the environment variable holding the API key"),
    Param("fixture", "", "scripted: file of recorded improver replies"),
    Param("improve_timeout_s", 60.0, "Time limit for the improvement LLM's three answers [s]"),
    Param("scene_timeout_s", 5.0, "Longest wait for sim/get_ground_truth, the scene lessons are bound to [s]"),
    Param("warm_up", True, "Load the sentence-embedding model at start instead of on the first request"),
)


def episode_msg(ep: Episode, score: float = 0.0, matched: str = "") -> MemoryEpisode:
    s = ep.summary()
    return MemoryEpisode(id=int(ep.id or 0), kind=ep.kind, scope=ep.scope, what=str(s.get("what") or ""),
                         instruction=ep.request, feedback=ep.feedback, plan=ep.plan, source=ep.source,
                         created=float(ep.created or 0.0), score=float(score), matched=matched, body=ep.to_body())


class MemoryNode(Node):
    def __init__(self, **kwargs):
        super().__init__("memory", **kwargs)
        self.p = declare(self, PARAMS)
        improver, classifier = None, None
        try:
            if self.p["improver"] != "rules":
                llm = make_backend(DetectorSettings(backend=self.p["improver"], model=self.p["model"],
                                                    base_url=self.p["base_url"], api_key_env=self.p["api_key_env"],
                                                    fixture=self.p["fixture"]))
                improver = LLMImprover(llm, timeout_s=self.p["improve_timeout_s"])
                classifier = LLMFeedbackClassifier(llm)
            self.service = MemoryService(self.p["database"], seeds=self.p["seeds"], learning=self.p["learning"],
                                         busy_timeout_s=self.p["busy_timeout_s"], improver=improver,
                                         classifier=classifier)
        except (ValueError, OSError, SeedError, FeedbackError) as exc:
            raise StartupError(self.get_name(), str(exc)) from None
        group = ReentrantCallbackGroup()
        self.scene_source = GroundTruthScene(self, timeout_s=self.p["scene_timeout_s"], callback_group=group)
        self.pub_status = self.create_publisher(String, "memory/status", LATCHED)
        self.create_service(MemoryList, "memory/list", self._on_list, callback_group=group)
        self.create_service(MemoryGet, "memory/get", self._on_get, callback_group=group)
        self.create_service(MemoryForget, "memory/forget", self._on_forget, callback_group=group)
        self.create_service(MemoryRetrieve, "memory/retrieve", self._on_retrieve, callback_group=group)
        self.create_service(MemoryPlanTask, "memory/plan_task", self._on_plan_task, callback_group=group)
        self.create_service(MemoryLearn, "memory/learn", self._on_learn, callback_group=group)
        self._publish_status()
        st = self.service.status()
        if self.service.learning:
            self.get_logger().info(f"memory ready: {st['database']} ({st['seeds']} seed examples, "
                                   f"{st['lessons']} lessons; lessons by {self.service.improver.name})")
        else:
            self.get_logger().error(f"memory runs WITHOUT learning: {self.service.error}. It answers from the "
                                    f"{st['seeds']} seed examples; nothing is stored")
        if self.p["warm_up"] and self.service.memory is not None:
            threading.Thread(target=self._warm_up, name="memory-warm-up", daemon=True).start()

    def _warm_up(self) -> None:
        try:
            self.service.memory.embed(["warm up"])
        except EpisodicMemoryError as exc:
            self.get_logger().error(f"the sentence-embedding model cannot be used: {exc}")

    def _publish_status(self) -> None:
        self.pub_status.publish(String(data=json.dumps(self.service.status())))

    def _scene(self, text: str) -> tuple[SceneIndex, str]:
        """The scene a caller sent, else the current one from sim/get_ground_truth (an empty
        index, with a warning, when neither is there)."""
        if text.strip():
            return scene_from_json(text), text
        scene, doc, error = self.scene_source.fetch()
        if scene is None:
            self.get_logger().warning(f"no scene to bind lessons to: {error}")
            return SceneIndex({}), ""
        return scene, doc

    # ------------------------------------------------------------------ list, get, forget
    def _on_list(self, req, res):
        res.learning = self.service.learning
        try:
            res.episodes = [episode_msg(e) for e in self.service.list(req.kind, req.scope)]
            res.success, res.message = True, f"{len(res.episodes)} examples" + \
                ("" if self.service.learning else f" (not learning: {self.service.error})")
        except ValueError as exc:
            res.success, res.message = False, str(exc)
        return res

    def _on_get(self, req, res):
        try:
            res.episode = episode_msg(self.service.get(req.id))
            res.success = True
        except UnknownEpisode as exc:
            res.success, res.message = False, str(exc)
        return res

    def _on_forget(self, req, res):
        try:
            ep = self.service.forget(req.id)
        except (UnknownEpisode, EpisodeError, EpisodicMemoryError) as exc:
            res.success, res.message = False, str(exc)
            return res
        res.success, res.episode = True, episode_msg(ep)
        res.message = f"forgot lesson {ep.id}: {ep.feedback or ep.request!r}"
        self.get_logger().info(res.message)
        self._publish_status()
        return res

    # ------------------------------------------------------------------ retrieve, plan_task
    def _on_retrieve(self, req, res):
        res.learning = self.service.learning
        try:
            hits = self.service.retrieve(list(req.instructions), k=req.k, scope=req.scope, kind=req.kind,
                                         task=req.task, category=req.category, action=req.action,
                                         recent=req.recent, gamma=req.gamma)
        except (ValueError, EpisodicMemoryError) as exc:
            res.success, res.message = False, str(exc)
            return res
        res.episodes = [episode_msg(h.episode, h.score, h.instruction) for h in hits]
        res.success, res.message = True, f"{len(hits)} examples"
        return res

    def _on_plan_task(self, req, res):
        try:
            roles = parse_roles(list(req.roles))
            scene, doc = self._scene("")
            tp = self.service.plan_task(req.request, req.task, roles, scene, list(req.earlier))
        except (TaskError, ValueError, TaskPlanError, EpisodicMemoryError) as exc:
            res.success, res.message = False, str(exc)
            self.get_logger().warning(f"no plan for {req.request!r}: {exc}")
            return res
        res.success, res.source, res.score, res.scene_json = True, tp.source, float(tp.score), doc
        res.episode_id = int(tp.episode.id or 0)
        res.plan_text = tp.plan.to_code()
        res.skipped = list(tp.skipped)
        res.steps = [RecoveryStep(action=s.action, args=[a.name if isinstance(a, Var) else a.value for a in s.args],
                                  arg_is_variable=[isinstance(a, Var) for a in s.args], binds=s.binds or "")
                     for s in tp.plan.steps]
        res.message = f"{len(tp.plan.steps)} steps from {tp.source}"
        self.get_logger().info(f"plan for {req.request!r}: {res.message}"
                               + (f"; not used: {'; '.join(tp.skipped)}" if tp.skipped else ""))
        return res

    # ------------------------------------------------------------------ learn
    def _on_learn(self, req, res):
        try:
            it = Interaction.from_json(req.interaction_json)
            scene, _doc = self._scene(req.scene_json)
        except (InteractionError, ValueError) as exc:
            res.stored, res.reason = False, str(exc)
            res.message = self.service.dialogue.say("not_learned", reason="I could not read what happened")
            self.get_logger().warning(f"memory/learn refused: {exc}")
            return res
        ans = self.service.learn(it, req.feedback, scene, kind=req.feedback_kind)
        res.stored, res.message, res.ids = ans.stored, ans.message, list(ans.ids)
        res.reason, res.problem, res.improvement, res.backend = ans.reason, ans.problem, ans.improvement, ans.backend
        if ans.stored:
            self.get_logger().info(f"learned lesson(s) {ans.ids} from {req.feedback!r}: {ans.improvement}")
            self._publish_status()
        else:
            self.get_logger().info(f"nothing learned from {req.feedback!r}: {ans.reason}")
        return res

    def destroy_node(self):
        self.service.close()
        return super().destroy_node()


def main(args=None) -> int:
    return run_node(MemoryNode, args=args)
