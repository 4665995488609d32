# Source this to get the project's environment: the venv, the ROS 2 wheels, and this
# package's install/ (generated interfaces, executables, share/ files).
_RAIDER_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)"
. "$_RAIDER_ROOT/.venv/bin/activate"
_RAIDER_PREFIX="$_RAIDER_ROOT/install/raider_ros"
export AMENT_PREFIX_PATH="$_RAIDER_PREFIX:$VIRTUAL_ENV"
export CMAKE_PREFIX_PATH="$_RAIDER_PREFIX:$VIRTUAL_ENV"
export PYTHONPATH="$_RAIDER_PREFIX/lib/python3.11/site-packages${PYTHONPATH:+:$PYTHONPATH}"
export LD_LIBRARY_PATH="$_RAIDER_PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$_RAIDER_PREFIX/lib/raider_ros:$PATH"
export RMW_IMPLEMENTATION="${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}"
export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
# a node killed without a goodbye leaves discovery after ~4 s, not 20 s (config/fastdds.xml)
export FASTRTPS_DEFAULT_PROFILES_FILE="${FASTRTPS_DEFAULT_PROFILES_FILE:-$_RAIDER_ROOT/config/fastdds.xml}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export PYTHONDONTWRITEBYTECODE=1
