"""Write config/<node>.yaml from a node's declared PARAMS (defaults and descriptions).

    python scripts/gen_config.py raider_ros.nodes.spatial_relations spatial_relations
"""
import importlib
import sys

import yaml

mod = importlib.import_module(sys.argv[1])
node = sys.argv[2]
lines = [f"# Parameters of the {node} node (declared with descriptions in {sys.argv[1].replace('.', '/')}.py).",
         f"{node}:", "  ros__parameters:"]
for p in mod.PARAMS:
    v = p.default
    if isinstance(v, bool):
        text = "true" if v else "false"
    elif isinstance(v, float):
        text = repr(v)
    elif isinstance(v, str) and (v == "" or yaml.safe_load(v) != v):
        text = f'"{v}"'          # a string YAML would read as something else: off, yes, 1.0, ""
    else:
        text = str(v)
    lines.append(f"    {p.name}: {text}    # {p.description}")
open(f"config/{node}.yaml", "w").write("\n".join(lines) + "\n")
