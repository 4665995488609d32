"""The RAIDER agent, ROS-free: prompts, tool-call parsing, the program flow manager, LLM backends."""
