"""Start the raider_ros suite on a robot: `ros2 launch raider_ros raider.launch.py [sim:=false] ...`.

The nodes, their parameter files and the launch arguments come from launch/graph.yaml (the
same table `raider_graph` reads where launch_ros is absent). sim:=true (the default) also
starts the simulated world; sim:=false starts only the robot-side nodes, which then expect the
camera topics, robot_state, sim/get_ground_truth and the execute_skill action from the robot
(README, "On a robot"). Nodes marked respawn are restarted 2 s after they exit.
"""
import os


def generate_launch_description():
    from ament_index_python.packages import get_package_share_directory
    from launch import LaunchDescription
    from launch.actions import DeclareLaunchArgument
    from launch.conditions import IfCondition
    from launch.substitutions import LaunchConfiguration
    from launch_ros.actions import Node

    from raider_ros.common.graph_spec import load_graph_spec

    share = get_package_share_directory("raider_ros")
    spec = load_graph_spec(os.path.join(share, "launch", "graph.yaml"))
    actions = [DeclareLaunchArgument(a.name, default_value=a.default, description=a.description)
               for a in spec.arguments.values()]
    for n in spec.nodes:
        overrides = {param: LaunchConfiguration(a.name) for a in spec.arguments.values()
                     for exe, param in a.sets.items() if exe == n.executable}
        actions.append(Node(package="raider_ros", executable=n.executable, name=n.executable, output="screen",
                            parameters=[os.path.join(share, "config", n.config), overrides],
                            respawn=n.respawn, respawn_delay=2.0,
                            condition=IfCondition(LaunchConfiguration("sim")) if n.side == "sim" else None))
    return LaunchDescription(actions)
