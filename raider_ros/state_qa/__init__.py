"""RACCOON (robot state question answering), ROS-free core: state summaries from the robot's
modules, module selection (MiniLM embeddings, SVM + kNN), answers from an LLM or from rules
over the summaries' facts, and the evaluation. See docs/state_qa.md."""
