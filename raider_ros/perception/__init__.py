"""Perception, ROS-free: detection backends, per-object point clouds, spatial relations,
the benchmark oracle, the scene graph and the tools the agent calls."""
