"""Shared by every folder: data paths, the YAML reader, text helpers, the tool contract, box geometry."""
