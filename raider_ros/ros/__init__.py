"""ROS 2 adapters shared by the nodes: message conversions, parameters, spinning."""
