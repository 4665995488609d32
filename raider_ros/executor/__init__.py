"""ROS-free plan execution: PDDL parsing and planning, action mappings, the executor state
machine and the human-interface backends."""
