"""Ask the running graph's ``state_qa`` node questions about the robot's state and print the
answers with the modules they came from (used by the demo after a task).

The questions per demo task are data: data/state_qa/demo_questions.yaml.
"""
from __future__ import annotations

import threading
import time
from typing import Callable, Sequence

from raider_ros.common.paths import data_dir
from raider_ros.common.yamlfile import read_yaml_mapping
from raider_ros.ros.graph import NodeGraph, wait_for_services
from raider_ros.srv import AskRobot


def demo_questions(task: str) -> list[str]:
    """The questions listed for ``task`` in data/state_qa/demo_questions.yaml ([] if none)."""
    doc, path = read_yaml_mapping(data_dir() / "state_qa" / "demo_questions.yaml", what="demo question file")
    qs = doc.get(task) or []
    if not isinstance(qs, list) or not all(isinstance(q, str) for q in qs):
        raise ValueError(f"{path}: {task}: expected a list of question strings")
    return qs


def _call(client, question: str, timeout: float, graph: NodeGraph | None):
    done = threading.Event()
    future = client.call_async(AskRobot.Request(question=question))
    future.add_done_callback(lambda _f: done.set())
    end = time.monotonic() + timeout
    while not done.wait(0.2):
        if graph is not None:
            graph.check_alive()
        if time.monotonic() > end:
            raise TimeoutError(f"ask_robot: no answer to {question!r} within {timeout:.0f} s")
    return future.result()


def ask_about_state(node, questions: Sequence[str], say: Callable[[str, str], None], *,
                    graph: NodeGraph | None = None, timeout: float = 180.0) -> list:
    """Ask each question through ``ask_robot`` (``node`` must be spinning) and report question,
    answer and modules through ``say(who, text)``. Returns the responses. The first answer may
    wait for the node's embedding model (``timeout`` per question)."""
    if not questions:
        return []
    client = node.create_client(AskRobot, "ask_robot")
    wait_for_services(node, [client], timeout, graph)
    out = []
    for q in questions:
        say("ASK", q)
        r = _call(client, q, timeout, graph)
        modules = ", ".join(r.modules) or "no module"
        say("ANSWER", f"{r.answer}  [from: {modules}; {r.backend}]")
        out.append(r)
    return out
