"""ROS-free: how the robot talks with people (terminal, scripted person from a scenario file)."""
