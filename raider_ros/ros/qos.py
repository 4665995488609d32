"""The QoS profiles of the graph, defined once.

``LATCHED``: the last message stays with the publisher and reaches late subscribers
(scene graph JSON and status, robot state, camera info): state rather than events.
``SENSOR``: camera images, reliable with a short queue (the simulator renders on demand,
so no frame may be dropped between two world changes).
``EVENTS``: explanations, dialogue, transcripts: every message, a queue of 50.
"""
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
SENSOR = QoSProfile(depth=2, reliability=ReliabilityPolicy.RELIABLE)
EVENTS = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE)

# request services that may get a burst (ask_robot, safety_monitor/check_action): the default
# depth of 10 drops requests beyond it, unanswered (test/integration/test_load.py)
REQUESTS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=200, reliability=ReliabilityPolicy.RELIABLE)
