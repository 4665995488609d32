"""Safety Chip: natural-language constraints as LTLf, a runtime monitor over the symbolic
world state, pruning of unsafe actions and the material for corrective re-prompting (ROS-free).
See docs/safety.md."""
