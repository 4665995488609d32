"""Write config/<node>.yaml from a node's declared PARAMS (defaults and descriptions).

    python scripts/gen_config.py raider_ros.nodes.spatial_relations spatial_relations
"""
import importlib
import sys

mod = importlib.import_module(sys.argv[1])
node = sys.argv[2]
lines = [f"# Parameters of the {node} node (declared with descriptions in {sys.argv[1].replace('.', '/')}.py).",
         f"{node}:", "  ros__parameters:"]
for p in mod.PARAMS:
    v = p.default
    text = ("true" if v else "false") if isinstance(v, bool) else (repr(v) if isinstance(v, float) else (str(v) if v != "" else '""'))
    lines.append(f"    {p.name}: {text}    # {p.description}")
open(f"config/{node}.yaml", "w").write("\n".join(lines) + "\n")
