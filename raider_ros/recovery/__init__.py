"""ROS-free recovery planning: the recovery prompt, the plan parser/interpreter (ast
whitelist, nothing is executed) and the rules planner."""
