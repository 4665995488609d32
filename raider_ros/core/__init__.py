"""ROS-free building blocks: scenes, camera model, rendering, the simulated world."""
