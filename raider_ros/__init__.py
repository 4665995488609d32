"""raider_ros: action issue detection, explanation and recovery for ROS 2 robots.

The subpackages split into a ROS-free core (``common``, ``sim``, ``perception``, ``agent``,
``recovery``, ``executor``, ``human``, ``evaluation``) that imports nothing from rclpy, and thin
ROS 2 adapters (``ros``, ``nodes``) with the command-line programs in ``cli``. Generated interfaces live in ``raider_ros.msg``, ``.srv`` and
``.action`` once the package is built with colcon.
"""
__version__ = "0.1.0"

# The generated interfaces (raider_ros.msg/.srv/.action) are installed by colcon next to
# these sources. When a source checkout shadows the install on sys.path (running from the
# repository root), let Python look for subpackages in every raider_ros directory.
__path__ = __import__("pkgutil").extend_path(__path__, __name__)
