"""The learning demo (make demo, task "learning"): learning from interaction (ARMAR-6,
docs/memory.md) on the node graph with a memory node on a fresh database.

The requests come from data/memory/demo_learning.yaml, the person from
data/scenarios/assistive_learning.yaml: "Please bring me my medicine." is planned from the
memory's seed example; afterwards Adriana says "next time, bring me a glass of water with my
medicine" and the memory node learns it. The next day, asked in other words, the robot brings the
medicine and the glass without being told; "Please bring me the book." is carried out as before.
Kept apart from demo.py so that the demo's other tasks stay as they are.
"""
from __future__ import annotations

import json
import time

from raider_ros.ros.actions import ActionClient

from raider_ros.action import ExecuteTask
from raider_ros.cli import demo
from raider_ros.common.paths import data_dir
from raider_ros.common.yamlfile import read_yaml_mapping
from raider_ros.ros.graph import NodeGraph

STAGES = {"planning": "PLAN", "checking": "CHECK", "issue": "ISSUE", "recovering": "RECOVER", "executing": "ROBOT",
          "done": "DONE", "learning": "LEARN"}


class LessonLines:
    """What the robot learned travels twice: as the executor's last "learning" feedback and in the
    result's ``lesson``. Feedback is a topic, so that message can be lost or arrive after the result;
    the demo says the lesson once, from whichever comes first."""

    def __init__(self) -> None:
        self._said: set[str] = set()

    def first_time(self, lesson: str) -> bool:
        """True when ``lesson`` is not empty and has not been said yet (and marks it said)."""
        lesson = lesson.strip()
        if not lesson or lesson in self._said:
            return False
        self._said.add(lesson)
        return True


def run_learning(timeout: float, log_dir: str | None, robot_prefix: str | None = None) -> bool:
    """Task 3: three requests in words on one graph with a memory node (a fresh database)."""
    import tempfile


    from raider_ros.srv import ApplySetup, MemoryList, MemoryPlanTask

    spec, _ = read_yaml_mapping(data_dir() / "memory" / "demo_learning.yaml", what="learning demo file")
    llm = demo.llm_params()
    say = demo.Narrator()
    print(f"\n=== {spec['title']} ===  (issue checks and recoveries: "
          f"{llm['backend'] if llm['backend'] != 'rules' else 'rules (no LLM)'}, person: scripted)", flush=True)
    with tempfile.TemporaryDirectory(prefix="raider-demo-memory-") as tmp, NodeGraph(log_dir, placement=demo.robot_placement(robot_prefix)) as graph:
        graph.start("sim_world", {"scene": spec["scene"], "skill_duration_s": 0.3})
        for name in demo.PERCEPTION:
            graph.start(name)
        graph.start("scene_graph", {"preload_user_info": False})
        graph.start("issue_detector", {"toolset": spec["toolset"], **llm})
        graph.start("recovery_planner", {"backend": llm["backend"]})
        graph.start("human_interface", {"backend": "scripted", "scenario": spec["scenario"],
                                        "feedback_classifier": llm["backend"]})
        graph.start("memory", {"database": f"{tmp}/memory.sqlite", "improver": llm["backend"]})
        graph.start("plan_executor")
        with demo.demo_node() as node:
            names, ready = demo.watch_graph(node, say)
            client = ActionClient(node, ExecuteTask, "execute_task")
            plan_client = node.create_client(MemoryPlanTask, "memory/plan_task")
            setup_client = node.create_client(ApplySetup, "sim/apply_setup")
            list_client = node.create_client(MemoryList, "memory/list")
            end = time.monotonic() + 90
            while not (client.wait_for_server(timeout_sec=0.5) and ready.is_set()
                       and plan_client.wait_for_service(timeout_sec=0.5)):
                graph.check_alive()
                if time.monotonic() > end:
                    raise TimeoutError("the node graph did not come up within 90 s (perception, memory or executor)")
            say("READY", "simulated world, perception, issue detector, planner, person, memory and executor are up")

            lesson_lines = LessonLines()

            def on_feedback(m):
                f = m.feedback
                if f.stage == "learning" and f.message.startswith(("learned lesson", "not learned")) \
                        and not lesson_lines.first_time(f.message):
                    return
                who = STAGES.get(f.stage, f.stage.upper())
                step = f"step {f.step_index + 1} " if f.step_index >= 0 else ""
                text = f.message if f.stage in ("planning", "checking", "recovering") else \
                    names["now"].rewrite(f.message, capitalise=False)
                say(who, f"{step}{text}")

            def wait(future, what: str, limit: float):
                stop = time.monotonic() + limit
                while not future.done():
                    time.sleep(0.1)
                    graph.check_alive()
                    if time.monotonic() > stop:
                        raise TimeoutError(f"{what} did not finish within {limit:.0f} s")
                return future.result()

            ok = True
            for r in spec["requests"]:
                say("NOTE", r["note"])
                if r.get("setup"):
                    res = wait(setup_client.call_async(ApplySetup.Request(setup_yaml=json.dumps(r["setup"]),
                                                                          reset=True)), "sim/apply_setup", 30)
                    if not res.success:
                        raise RuntimeError(f"the simulator refused the demo's setup: {res.message}")
                say("PERSON", r["say"])
                goal = ExecuteTask.Goal(request=r["say"], task_kind=r["task"], roles=list(r["roles"]))
                handle = wait(client.send_goal_async(goal, feedback_callback=on_feedback), "sending the request", 30)
                if not handle.accepted:
                    raise RuntimeError("plan_executor refused the request")
                res = wait(handle.get_result_async(), "the request", timeout).result
                if lesson_lines.first_time(res.lesson):     # its feedback message was lost or is late
                    say("LEARN", names["now"].rewrite(res.lesson, capitalise=False))
                say("RESULT", f"{'success' if res.success else 'FAILED'}: {res.message} "
                              f"({res.steps_done}/{res.steps_total} steps, plan from {res.plan_source or 'nowhere'})")
                source = res.plan_source or "nowhere"
                expected = r.get("plan_from")      # "lesson" or "seed": what the demo is meant to show
                if expected and not source.startswith(expected):
                    say("NOTE", f"expected a plan from a {expected}, got one from {source}")
                    ok = False
                ok = ok and bool(res.success)
            lessons = wait(list_client.call_async(MemoryList.Request(kind="lesson")), "memory/list", 30).episodes
            for e in lessons:
                say("MEMORY", f"lesson {e.id} ({e.what}), learned from: {e.feedback!r}")
            return ok and len(lessons) == 1


def main(args: list[str] | None = None) -> int:
    """``python -m raider_ros.cli.demo_learning [--timeout S] [--log-dir D]``: the demo's learning
    task alone (the same as ``demo --task learning``)."""
    import sys
    from raider_ros.cli.demo import main as demo_main
    return demo_main(["--task", "learning", *(sys.argv[1:] if args is None else args)])


if __name__ == "__main__":
    raise SystemExit(main())
