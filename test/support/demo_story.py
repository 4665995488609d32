"""What `make demo` must show, in order (test_demo; test_two_hosts runs the same demo with the
robot's side of the graph on another host)."""
from __future__ import annotations

import re


ALL_TASKS = ("assistive", "kitchen", "safety", "learning")


def check_demo_story(out: str, tasks: tuple[str, ...] = ALL_TASKS) -> None:
    """The tasks succeeded (all four unless ``tasks`` names fewer, as ``--task`` did), with the
    interactions of the paper's Fig. 17, the Safety Chip paper's example, the state questions
    and learning from a correction, in order."""
    assert "Demo succeeded." in out
    story = []
    if "assistive" in tasks:             # the Fig. 17 story, in order
        story += ["blocked by the chair", "The person moved the chair", "Which medicine", "closest to the plant",
                  "beyond the robot", "bring it closer", "not recognised", "I'm Adriana", "not looking",
                  "look at me", "handing the medicine I am holding to Adriana", "success: all 4 steps done"]
    if "kitchen" in tasks:
        story += ["success: all 5 steps done"]
    if "safety" in tasks:                # task 3, the Safety Chip (the paper's example): pruned twice,
        story += ["-> !agent_at(bathroom) U agent_at(living_room)",          # re-planned, nothing unsafe
                  "unsafe, not done: going to the sink would break the rule",
                  "going to the living room would break the rule",
                  "safe re-plan 2/3: move_to(bedroom); move_to(living_room); move_to(Sink_1)",
                  "step 1 going to the sink", "success: all 1 steps done", "0 unsafe step(s) dispatched"]
    pos = [out.find(s) for s in story]
    assert all(p >= 0 for p in pos), [s for s, p in zip(story, pos) if p < 0]
    assert pos == sorted(pos), "the demo's events are out of order"
    if "assistive" in tasks:
        # after the Fig. 17 task the robot answers questions about its own state (state_qa, ask_robot)
        # with the modules each answer came from, before the next task starts
        asked = re.findall(r"^\[[ \d.]+s\] ASK +(.+)$", out, re.M)
        answers = re.findall(r"^\[[ \d.]+s\] ANSWER +(.+)  \[from: ([^;]+); rules \(no LLM\)\]$", out, re.M)
        assert asked == ["Why did you stop before the table?", "Where is the medicine now?", "Who did you give it to?"]
        assert len(answers) == 3 and all(mods != "no module" for _, mods in answers), answers
        assert "Adriana" in answers[2][0] and "robot" in answers[2][1], answers[2]
        headers = [m.start() for m in re.finditer(r"^=== ", out, re.M)]      # the assistive task comes first
        assert len(headers) < 2 or out.find("Who did you give it to?") < headers[1]

    if "learning" in tasks:
        # task 4, learning from interaction: seed plan, the lesson, then the glass too without being told; the book alone
        learning = ["plan comes from the memory's seed task/deliver-medicine", "glass of water with my medicine",
                    "learned lesson", "plan from seed task/deliver-medicine",       # the first delivery's result
                    "plan comes from the memory's lesson", "plan from lesson", "Please bring me the book.",
                    "plan comes from the memory's seed task/deliver-medicine", "plan from seed task/deliver-medicine"]
        at, pos = 0, []
        for s in learning:
            at = out.find(s, at)
            pos.append(at)
            at = max(at, 0) + 1
        assert all(p >= 0 for p in pos), [s for s, p in zip(learning, pos) if p < 0]

    lines = [ln for ln in out.splitlines() if ln.startswith("[")]
    said = [ln.split("ROBOT", 1)[1] for ln in lines if " ROBOT " in ln]
    # the robot names things as a person would: no ids in what it says or does, no doubled words
    assert not [s for s in said if re.search(r"\b[A-Z][A-Za-z]*_\d+\b", s)], said
    assert not [ln for ln in lines if re.search(r"\b(\w+(?: \w+){0,2}) (?:or |and )?\1\b", ln.split("]", 1)[1])]
    # every recovery is announced after the issue it answers (an ISSUE since the step's last CHECK)
    stages = [ln.split()[2] for ln in lines]
    for i, s in enumerate(stages):
        if s == "RECOVER":
            last_check = max(j for j in range(i) if stages[j] == "CHECK")
            assert "ISSUE" in stages[last_check:i], lines[last_check:i + 1]
