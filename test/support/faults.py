"""Faults mid-task: SIGKILL one node while the plan executor runs a task, then start it again
(what respawn does) and run the task once more.

``FAULTS`` is the table the integration test and bench/bench_faults.py run; a later node
(safety monitor, memory, state Q&A) joins by adding a row. ``at`` is the executor feedback
stage whose first message triggers the kill; ``reason`` lists words of which the abort reason
must hold one (it must name what failed).

The task is the first step of the paper's medicine delivery (scene assistive_room, domain
assistive, ready plan "(approach start medicine_counter)"): the check finds Chair_1 blocking
the path, the recovery planner writes a plan that asks the person to move it, the person does
(a world change), the check is repeated and the robot drives to the counter. It uses every
node of the graph.

The later nodes run in the same graph: safety_monitor (one constraint the task never touches;
its row turns the executor's ``safety`` on, ``executor``), memory (the recovery planner asks it
for examples and lessons) and state_qa (nobody in the task needs it). ``expect`` says what a row
must show: ``reason`` (the default: a clear reason, or success only when the simulator agrees),
``refused`` (no success and nothing more dispatched: the robot never reaches the counter),
``success`` (the task is unaffected; ``log`` names a line the node ``log[0]`` writes when it
carries on without the killed node). ``after`` is a check once the node is back
(``ask_robot``: the question is answered).
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from raider_ros.ros.actions import ActionClient

from raider_ros.action import ExecuteTask
from support.graph import PERCEPTION

SCENE = "assistive_room"
TASK = ExecuteTask.Goal(domain="assistive", plan=["(approach start medicine_counter)"])
SETUP = ""                      # the scene as written (the chair back in the way)
PERCEPTION_REASON = ("perception", "scene_graph", "tools unavailable")


@dataclass(frozen=True)
class Fault:
    node: str                      # executable name (and node name) killed
    at: str                        # executor stage whose first feedback triggers the kill
    reason: tuple[str, ...]        # one of these words must be in the abort reason
    ready: tuple[str, ...] = ()    # services it serves, awaited after its restart
    expect: str = "reason"         # reason | refused | success (see the module docstring)
    executor: tuple[tuple[str, object], ...] = ()     # plan_executor parameters for this row
    log: tuple[str, str] | None = None                # (node, text) its log must gain during the run
    after: str = ""                # a check once the node is back: ask_robot
    named: bool = False            # the abort reason names the killed node itself


SAFETY_REASON = ("safety monitor", "safety_monitor")
SAFETY_CONSTRAINTS = {"format": "raider-constraints/1", "constraints": [
    {"ltl": "G !pick(bottle)", "text": "Never pick up the bottle."}]}      # the task never does

FAULTS: list[Fault] = [
    Fault("object_detector", "checking", PERCEPTION_REASON, named=True),
    Fault("depth_distance", "checking", PERCEPTION_REASON, ("depth_distance/measure",), named=True),
    Fault("spatial_relations", "checking", PERCEPTION_REASON, ("spatial_relations/query",), named=True),
    Fault("scene_graph", "checking", PERCEPTION_REASON, ("scene_graph/call_tool",)),
    Fault("issue_detector", "checking", ("detect_issue",), ("detect_issue",)),
    Fault("recovery_planner", "checking", ("plan_recovery",), ("plan_recovery",)),
    Fault("human_interface", "checking", ("human/ask",), ("human/ask",)),
    Fault("sim_world", "executing", ("execute_skill",) + PERCEPTION_REASON, ("sim/apply_setup",)),
    # the later capabilities (issues 12, 14, 15)
    Fault("memory", "checking", (), ("memory/retrieve",), expect="success",
          log=("recovery_planner", "planned without the memory")),
    Fault("state_qa", "checking", (), ("ask_robot",), expect="success", after="ask_robot"),
    Fault("safety_monitor", "checking", SAFETY_REASON, ("safety_monitor/check_action",), expect="refused",
          executor=(("safety", True),)),
]


def wait_ready(client, fault: Fault, timeout_s: float = 120.0) -> None:
    """After a restart: the new process spins (its log says so: DDS still lists a SIGKILLed node
    and its services until its lease runs out), and the node and its services are in the graph."""
    end = time.monotonic() + timeout_s
    client.graph.wait_up(fault.node, timeout_s)
    while fault.node not in client.node.get_node_names():
        if time.monotonic() > end:
            raise TimeoutError(f"{fault.node} did not come back within {timeout_s:.0f} s")
        time.sleep(0.2)
    for srv in fault.ready:
        names = dict(client.node.get_service_names_and_types())
        while f"/{srv}" not in names:
            if time.monotonic() > end:
                raise TimeoutError(f"{fault.node}: service {srv} did not come back within {timeout_s:.0f} s")
            time.sleep(0.2)
            names = dict(client.node.get_service_names_and_types())


def scenario_file(directory: Path) -> Path:
    """The person of the task: moves the chair when asked, as often as asked."""
    p = Path(directory) / "faults_person.yaml"
    p.write_text(yaml.safe_dump({"format": "raider-scenario/1", "name": "faults", "order": "any", "entries": [
        {"match": {"keywords": ["chair"], "any": ["move", "clear", "aside", "way"]},
         "answer": "Sure, I have moved the chair out of your way.", "times": 1000,
         "world": {"objects": {"Chair_1": {"center": [1.2, 1.6, 0.45]}}}}]}))
    return p


EXECUTOR_PARAMS = {"detect_timeout_s": 40.0, "plan_timeout_s": 30.0, "skill_timeout_s": 30.0, "ask_timeout_s": 20.0,
                   "server_wait_s": 10.0}
# this machine's perception pauses for over 10 s when the 2 cores are shared (load average 8-11
# measured): generous waits for the detector, so that only the killed node ends the task
DETECTOR_PARAMS = {"backend": "rules", "toolset": "assistive", "fresh_frame_timeout_s": 20.0,
                   "perception_silent_s": 20.0}


@dataclass
class TaskRun:
    success: bool | None = None
    message: str = ""
    stages: list[str] = field(default_factory=list)
    killed_at: float | None = None          # time.monotonic() of the kill
    ended_at: float | None = None

    @property
    def time_to_reason_s(self) -> float | None:
        if self.killed_at is None or self.ended_at is None:
            return None
        return self.ended_at - self.killed_at


def run_task(client, timeout_s: float, kill=None, at: str | None = None) -> TaskRun:
    """Send the task; when ``kill`` is given, call it on the first feedback of stage ``at``."""
    ac: ActionClient = client.action_client(ExecuteTask, "execute_task")
    if not ac.wait_for_server(timeout_sec=30):
        raise TimeoutError("execute_task: no action server")
    run = TaskRun()
    done = threading.Event()
    fired = threading.Event()

    def on_feedback(m):
        run.stages.append(m.feedback.stage)
        if kill is not None and m.feedback.stage == at and not fired.is_set():
            fired.set()
            threading.Thread(target=do_kill, daemon=True).start()

    def do_kill():
        run.killed_at = time.monotonic()
        kill()

    def on_result(f):
        r = f.result().result
        run.success, run.message, run.ended_at = bool(r.success), r.message, time.monotonic()
        done.set()

    def on_goal(f):
        h = f.result()
        if not h.accepted:
            run.success, run.message = False, "goal rejected"
            done.set()
            return
        h.get_result_async().add_done_callback(on_result)

    ac.send_goal_async(TASK, feedback_callback=on_feedback).add_done_callback(on_goal)
    if not done.wait(timeout_s):
        run.message = f"no result within {timeout_s:.0f} s"
    return run


def task_done(client) -> bool:
    """What the simulator says (not what the executor reported): the robot left its start and
    stands at the medicine counter."""
    truth = client.truth()
    x, y = truth["robot"]["pose"][:2]
    counter = next(o for o in truth["objects"] if o["id"] == "MedicineCounter_1")
    cx, cy = counter["center"][:2]
    return (x * x + y * y) ** 0.5 > 1.0 and ((x - cx) ** 2 + (y - cy) ** 2) ** 0.5 < 1.5


def start_graph(graph, tmp: Path) -> None:
    """Every node of the task, each its own process (NodeGraph), and the later nodes."""
    graph.start("sim_world", {"scene": SCENE, "skill_duration_s": 0.3})
    for name in PERCEPTION:
        graph.start(name, {"preload_user_info": False} if name == "scene_graph" else None)
    graph.start("issue_detector", DETECTOR_PARAMS)
    graph.start("recovery_planner", {"backend": "rules"})
    graph.start("human_interface", {"backend": "scripted", "scenario": str(scenario_file(tmp))})
    graph.start("plan_executor", EXECUTOR_PARAMS)
    constraints = Path(tmp) / "faults_constraints.yaml"
    constraints.write_text(yaml.safe_dump(SAFETY_CONSTRAINTS))
    graph.start("safety_monitor", {"constraints_file": str(constraints)})
    graph.start("memory", {"database": str(Path(tmp) / "faults_memory.sqlite")})
    graph.start("state_qa", {"backend": "rules"})
    graph.executor_params = dict(EXECUTOR_PARAMS)


def use_executor(graph, client, fault: Fault, timeout_s: float = 120.0) -> None:
    """Start plan_executor again when the row needs other parameters than it runs with."""
    want = {**EXECUTOR_PARAMS, **dict(fault.executor)}
    if getattr(graph, "executor_params", None) == want:
        return
    graph.stop("plan_executor")
    graph.start("plan_executor", want)
    graph.executor_params = want
    ac = client.action_client(ExecuteTask, "execute_task")
    if not ac.wait_for_server(timeout_sec=timeout_s):
        raise TimeoutError(f"plan_executor with {fault.executor} did not come up within {timeout_s:.0f} s")


def log_size(graph, node: str) -> int:
    try:
        return graph.nodes[node].log_path.stat().st_size
    except (KeyError, OSError):
        return 0


def log_since(graph, node: str, offset: int) -> str:
    with open(graph.nodes[node].log_path, "rb") as f:
        f.seek(offset)
        return f.read().decode(errors="replace")


def ask_robot(client, question: str = "What are you holding?", timeout_s: float = 180.0, attempt_s: float = 45.0):
    """ask_robot once the node is back; the reply (AskRobot.Response). A respawned state_qa loads
    the embedding model and trains its selector first: on a loaded machine that takes a minute.
    The question is asked again when an attempt gets no answer: a request sent right after the
    new server appeared in discovery can be lost (the server may not yet have matched this
    client's reply reader); the question is harmless to repeat."""
    from raider_ros.srv import AskRobot
    end = time.monotonic() + timeout_s
    while True:
        try:
            return client.call(AskRobot, "ask_robot", timeout=min(attempt_s, max(1.0, end - time.monotonic())),
                               question=question)
        except TimeoutError:
            if time.monotonic() >= end:
                raise


def fresh_world(client, timeout: float = 90.0) -> None:
    """The task's world again (after a run or a restarted simulator), seen by perception."""
    end = time.monotonic() + timeout
    while True:
        try:
            client.wait_refreshed(client.apply(SETUP), timeout=max(1.0, end - time.monotonic()))
            return
        except (TimeoutError, AssertionError):
            if time.monotonic() > end:
                raise


# the longest port wait of the executor, plus margin: a killed node must be named within it
DEADLINE_S = max(EXECUTOR_PARAMS.values()) + 30.0
