"""EmbodiedRAG for RAIDER: the scene graph as documents in a vector index, and retrieval of the
task-relevant subgraph (ROS-free; the scene_graph node serves it as ``scene_graph/retrieve``).
See docs/retrieval.md."""
from .abstraction import EntityQuery, LLMAbstractor, RulesAbstractor, TaskAbstraction, mentioned_entities
from .documents import Document, DocumentStore, SyncStats
from .embedder import HashingEmbedder, MiniLMEmbedder, shared_embedder
from .index import DEFAULT_INDEX, KINDS, make_index
from .retriever import MODES, RetrievalError, RetrievalSettings, RetrievedNode, Retriever, Subgraph
from .scene_text import SceneText, recovery_context, scene_text, update_text

__all__ = ["EntityQuery", "LLMAbstractor", "RulesAbstractor", "TaskAbstraction", "mentioned_entities",
           "Document", "DocumentStore", "SyncStats", "HashingEmbedder", "MiniLMEmbedder", "shared_embedder",
           "DEFAULT_INDEX", "KINDS", "make_index", "MODES", "RetrievalError", "RetrievalSettings",
           "RetrievedNode", "Retriever", "Subgraph", "SceneText", "recovery_context", "scene_text", "update_text"]
