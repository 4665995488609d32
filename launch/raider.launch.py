"""Start the raider_ros suite on a robot: `ros2 launch raider_ros raider.launch.py`.

Every node gets its parameter file from share/raider_ros/config. Launch arguments override
the most common parameters (scene, LLM backend). Without launch_ros (as in the project's own
test machines) the same graph runs through raider_ros.ros.graph.NodeGraph.
"""
import os

# (executable under lib/raider_ros, parameter file under share/raider_ros/config)
NODES = [
    ("sim_world", "sim_world.yaml"),
    ("object_detector", "object_detector.yaml"),
    ("depth_distance", "depth_distance.yaml"),
    ("spatial_relations", "spatial_relations.yaml"),
    ("scene_graph", "scene_graph.yaml"),
    ("issue_detector", "issue_detector.yaml"),
    ("recovery_planner", "recovery_planner.yaml"),
    ("human_interface", "human_interface.yaml"),
    ("plan_executor", "plan_executor.yaml"),
]

# launch argument -> (default, description, {executable: parameter name})
ARGUMENTS = {
    "scene": ("kitchen", "Scene the simulated world loads (name under share/raider_ros/data/scenes, or a path)",
              {"sim_world": "scene"}),
    "backend": ("rules", "LLM backend of the issue checks and recovery plans: rules (no LLM) | openai",
                {"issue_detector": "backend", "recovery_planner": "backend"}),
    "toolset": ("household", "Tools of the issue checks: household | assistive | preferences",
                {"issue_detector": "toolset"}),
    "human": ("terminal", "How the robot talks with people: terminal | scripted", {"human_interface": "backend"}),
}


def generate_launch_description():
    from ament_index_python.packages import get_package_share_directory
    from launch import LaunchDescription
    from launch.actions import DeclareLaunchArgument
    from launch.substitutions import LaunchConfiguration
    from launch_ros.actions import Node

    share = get_package_share_directory("raider_ros")
    actions = [DeclareLaunchArgument(name, default_value=default, description=desc)
               for name, (default, desc, _) in ARGUMENTS.items()]
    for executable, config in NODES:
        overrides = {param: LaunchConfiguration(arg)
                     for arg, (_, _, targets) in ARGUMENTS.items()
                     for exe, param in targets.items() if exe == executable}
        actions.append(Node(package="raider_ros", executable=executable, name=executable, output="screen",
                            parameters=[os.path.join(share, "config", config), overrides]))
    return LaunchDescription(actions)
