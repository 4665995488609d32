"""Command-line tools (each has a main() and an executable under lib/raider_ros)."""
