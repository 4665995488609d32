"""Learning from interaction (Bärmann et al., ARMAR-6): an episodic memory of interaction
examples, retrieved by similarity to build prompts and reused by the rules planners, and
learn_from_interaction to turn a person's corrections into lessons. ROS-free.

The API the memory node uses:

* :class:`~raider_ros.memory.store.EpisodicMemory` - ``add``, ``get``, ``list``, ``lessons``,
  ``forget``, ``retrieve``; :class:`~raider_ros.memory.store.EpisodicMemoryError` for a
  corrupt, locked or unusable file;
* :func:`~raider_ros.memory.feedback.classify_feedback` /
  :class:`~raider_ros.memory.feedback.LLMFeedbackClassifier` - does the person correct the
  robot?
* :func:`~raider_ros.memory.learning.learn_from_interaction` with
  :class:`~raider_ros.memory.learning.RulesImprover` or
  :class:`~raider_ros.memory.learning.LLMImprover`, on an
  :class:`~raider_ros.memory.interaction.Interaction`;
* :class:`~raider_ros.memory.advisor.MemoryAdvisor` - passed as ``memory=`` to the recovery
  planner (lessons for the rules writer, examples for an LLM's prompt);
* :class:`~raider_ros.memory.tasks.TaskPlanner` - a request's plan from examples and lessons;
* :mod:`raider_ros.memory.benchmark` - ``main()`` runs the learning benchmark.
"""
