"""Evaluation, ROS-free: loading benchmark directories (format v1), running cases through a
pipeline, scoring Grnd / Det / Expl, and writing reports (JSON, Markdown, PNG)."""
