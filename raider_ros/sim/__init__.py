"""ROS-free simulator: scene model, camera model, renderer, world and skills."""
