"""The safety_monitor node's services as the executor's safety ports and the issue detector's
pre-check (ROS adapter; the verdicts are raider_ros.executor.machine.SafetyVerdict).

``SafetyClient(node)``: ``check_action(action)``, ``check_plan(actions)``, ``follow(action)``,
``reset()`` -> SafetyVerdict (a service that is missing or does not answer in time raises, which
the executor turns into "nothing is dispatched"), ``look(actions)`` -> a planner's
:class:`~raider_ros.executor.safe_plan.Look`. :func:`unfeasibility_for` turns an unsafe verdict
into the issue detector's answer (ROS-free).
"""
from __future__ import annotations

import threading
from typing import Any

from raider_ros.executor.machine import SafetyVerdict
from raider_ros.executor.safe_plan import Look
from raider_ros.recovery.rules_writer import read_request
from raider_ros.srv import CheckAction, CheckPlan, FollowStep, ResetMonitor

SKILLS = ("move_to", "pick", "place", "open", "close", "turn_on", "turn_off", "slice", "handover")


class SafetyClient:
    def __init__(self, node: Any, prefix: str = "safety_monitor", *, callback_group: Any = None,
                 timeout_s: float = 5.0, wait_for_service: bool = True):
        self.node = node
        self.timeout_s = timeout_s
        self.wait_for_service = wait_for_service       # False: a service not discovered yet fails at once
        mk = lambda srv, name: node.create_client(srv, f"{prefix}/{name}", callback_group=callback_group)  # noqa: E731
        self.check_action_client = mk(CheckAction, "check_action")
        self.check_plan_client = mk(CheckPlan, "check_plan")
        self.follow_client = mk(FollowStep, "follow")
        self.reset_client = mk(ResetMonitor, "reset")

    def _call(self, client: Any, request: Any, timeout: float | None = None) -> Any:
        timeout = self.timeout_s if timeout is None else timeout
        ready = client.wait_for_service(timeout_sec=min(timeout / 2, 2.0)) if self.wait_for_service \
            else client.service_is_ready()
        if not ready:
            raise RuntimeError(f"the service {client.srv_name} is not available (is safety_monitor running?)")
        done = threading.Event()
        future = client.call_async(request)
        future.add_done_callback(lambda _f: done.set())
        if not done.wait(timeout):
            raise TimeoutError(f"{client.srv_name}: no answer within {timeout:g} s")
        res = future.result()
        if res is None:
            raise RuntimeError(f"{client.srv_name}: the call failed")
        return res

    @staticmethod
    def _verdict(r: Any, first_unsafe: int | None = None) -> SafetyVerdict:
        return SafetyVerdict(r.verdict, getattr(r, "action", ""), r.explanation or r.error, list(r.violated_text),
                             getattr(r, "corrective_prompt", ""), first_unsafe, r.error, r.session)

    def check_action(self, action: str) -> SafetyVerdict:
        return self._verdict(self._call(self.check_action_client, CheckAction.Request(action=action)))

    def check_plan(self, actions: list[str]) -> SafetyVerdict:
        r = self._call(self.check_plan_client, CheckPlan.Request(steps=list(actions)))
        return self._verdict(r, r.first_unsafe_step if r.first_unsafe_step >= 0 else None)

    def follow(self, action: str) -> SafetyVerdict:
        return self._verdict(self._call(self.follow_client, FollowStep.Request(action=action, observe=True)))

    def reset(self) -> SafetyVerdict:
        r = self._call(self.reset_client, ResetMonitor.Request())
        return SafetyVerdict("safe" if r.success else "unsafe", "", r.message, reason="" if r.success else r.message,
                             session=r.session)

    def look(self, actions: list[str]) -> Look:
        r = self._call(self.check_plan_client, CheckPlan.Request(steps=list(actions)))
        return Look(r.verdict, tuple(r.automaton_states), None, list(r.violated_text),
                    r.first_unsafe_step if r.first_unsafe_step >= 0 else None)


def skill_call(query: str) -> str | None:
    """A structured query as the monitor reads it ("approach(toilet)" -> "move_to(toilet)"), or
    None when it is not one (natural-language queries are left to the agent)."""
    req = read_request(query)
    if req.action not in SKILLS or not req.args or req.text.strip()[-1:] != ")":
        return None
    return f"{req.action}({', '.join(req.args)})"


def unfeasibility_for(verdict: SafetyVerdict) -> tuple[str, str] | None:
    """("unfeasibility", explanation citing the constraint) for an unsafe verdict, else None."""
    if verdict.verdict != "unsafe":
        return None
    rules = "; ".join(f'"{t}"' for t in verdict.violated) or "a safety constraint"
    return "unfeasibility", (f"The action is not allowed: {verdict.action or 'it'} would break the safety rule "
                             f"{rules}. {verdict.explanation}").strip()
