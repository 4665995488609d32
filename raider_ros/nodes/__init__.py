"""ROS 2 nodes: one file per node, one class and a main() each (thin adapters over the core)."""
