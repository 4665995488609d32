"""Vector indexes over document embeddings (inner product of unit vectors = cosine).

``make_index(kind, dim)`` with ``kind``:

* ``exact`` — a numpy matrix, brute force: the reference every other kind is measured against;
* ``faiss-flat`` — FAISS ``IndexFlatIP`` under an id map: exact search, SIMD, in-place removal;
* ``hnswlib`` — HNSW graph (hnswlib), incremental adds, deletions by marking, slots reused;
* ``usearch`` — HNSW (usearch), incremental adds and removals;
* ``faiss`` — FAISS ``IndexHNSWFlat`` under an id map; removal is not supported by FAISS's
  HNSW, so removed keys are masked and the index is rebuilt when a quarter is masked;
* ``annoy`` — static trees (annoy): any change rebuilds the whole index.

The project's choice (``DEFAULT_INDEX`` = ``faiss-flat``) was made by measurement at 10,000
objects (bench/bench_retrieval.py, docs/retrieval.md "Choosing the index"): documents are labels,
so a house holds thousands of identical vectors, and the graph indexes (HNSW, annoy's trees)
lose a fifth to a third of the true neighbours on them; FAISS's flat index is exact and answers
in about a millisecond. Keys are non-negative ints.
"""
from __future__ import annotations

import importlib.util
from typing import Protocol, Sequence

import numpy as np

DEFAULT_INDEX = "faiss-flat"
KINDS = ("exact", "faiss-flat", "hnswlib", "usearch", "faiss", "annoy")


class IndexUnavailable(RuntimeError):
    """The library of an index kind is not installed."""


class VectorIndex(Protocol):
    kind: str

    def upsert(self, keys: Sequence[int], vectors: np.ndarray) -> None: ...
    def remove(self, keys: Sequence[int]) -> None: ...
    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]: ...
    def __len__(self) -> int: ...


def available(kind: str) -> bool:
    mod = {"exact": "numpy", "faiss-flat": "faiss", "hnswlib": "hnswlib", "usearch": "usearch", "faiss": "faiss",
           "annoy": "annoy"}[kind]
    return importlib.util.find_spec(mod) is not None


class ExactIndex:
    """Brute force over a matrix that grows by doubling."""
    kind = "exact"

    def __init__(self, dim: int, capacity: int = 1024):
        self.dim = dim
        self._vecs = np.zeros((capacity, dim), dtype=np.float32)
        self._keys = np.full(capacity, -1, dtype=np.int64)
        self._slot: dict[int, int] = {}
        self._free: list[int] = []
        self._n = 0

    def __len__(self) -> int:
        return len(self._slot)

    def upsert(self, keys: Sequence[int], vectors: np.ndarray) -> None:
        vectors = np.asarray(vectors, dtype=np.float32).reshape(len(keys), self.dim)
        for k, v in zip(keys, vectors):
            k = int(k)
            s = self._slot.get(k)
            if s is None:
                s = self._free.pop() if self._free else self._grow()
                self._slot[k] = s
                self._keys[s] = k
            self._vecs[s] = v

    def _grow(self) -> int:
        if self._n == len(self._keys):
            self._vecs = np.concatenate([self._vecs, np.zeros_like(self._vecs)])
            self._keys = np.concatenate([self._keys, np.full(len(self._keys), -1, dtype=np.int64)])
        self._n += 1
        return self._n - 1

    def remove(self, keys: Sequence[int]) -> None:
        for k in keys:
            s = self._slot.pop(int(k), None)
            if s is not None:
                self._keys[s] = -1
                self._vecs[s] = 0.0
                self._free.append(s)

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        if not self._slot or k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        sims = self._vecs[: self._n] @ np.asarray(query, dtype=np.float32).reshape(self.dim)
        sims = np.where(self._keys[: self._n] >= 0, sims, -np.inf)
        k = min(k, len(self._slot))
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.argsort(-sims[top], kind="stable")]
        return self._keys[top].copy(), sims[top].astype(np.float32)

    def similarities(self, keys: Sequence[int], query: np.ndarray) -> np.ndarray:
        """Exact similarity of the query to given keys (filtered search over a few documents)."""
        slots = [self._slot[int(k)] for k in keys]
        return self._vecs[slots] @ np.asarray(query, dtype=np.float32).reshape(self.dim)


class HnswlibIndex:
    kind = "hnswlib"

    def __init__(self, dim: int, capacity: int = 1024, m: int = 16, ef_construction: int = 100, ef: int = 64):
        import hnswlib
        self.dim, self.ef = dim, ef
        self._index = hnswlib.Index(space="ip", dim=dim)
        self._index.init_index(max_elements=capacity, M=m, ef_construction=ef_construction, allow_replace_deleted=True)
        self._index.set_ef(ef)
        self._keys: set[int] = set()
        self._deleted: set[int] = set()

    def __len__(self) -> int:
        return len(self._keys)

    def upsert(self, keys: Sequence[int], vectors: np.ndarray) -> None:
        if not len(keys):
            return
        vectors = np.asarray(vectors, dtype=np.float32).reshape(len(keys), self.dim)
        need = self._index.get_current_count() + len(keys)
        if need > self._index.get_max_elements():
            self._index.resize_index(max(need, 2 * self._index.get_max_elements()))
        for k in keys:
            if int(k) in self._deleted:
                self._index.unmark_deleted(int(k))
                self._deleted.discard(int(k))
        self._index.add_items(vectors, np.asarray(keys, dtype=np.int64), replace_deleted=False)
        self._keys.update(int(k) for k in keys)

    def remove(self, keys: Sequence[int]) -> None:
        for k in keys:
            k = int(k)
            if k in self._keys:
                self._index.mark_deleted(k)
                self._keys.discard(k)
                self._deleted.add(k)

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        k = min(k, len(self._keys))
        if k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        self._index.set_ef(max(self.ef, k))
        labels, dist = self._index.knn_query(np.asarray(query, dtype=np.float32).reshape(1, self.dim), k=k)
        return labels[0].astype(np.int64), (1.0 - dist[0]).astype(np.float32)


class UsearchIndex:
    kind = "usearch"

    def __init__(self, dim: int, capacity: int = 1024, m: int = 16, ef_construction: int = 100, ef: int = 64):
        from usearch.index import Index
        self.dim = dim
        self._index = Index(ndim=dim, metric="ip", dtype="f32", connectivity=m,
                            expansion_add=ef_construction, expansion_search=ef)

    def __len__(self) -> int:
        return len(self._index)

    def upsert(self, keys: Sequence[int], vectors: np.ndarray) -> None:
        if not len(keys):
            return
        keys_arr = np.asarray(keys, dtype=np.uint64)
        present = [k for k in keys_arr if k in self._index]
        if present:
            self._index.remove(np.asarray(present, dtype=np.uint64))
        self._index.add(keys_arr, np.asarray(vectors, dtype=np.float32).reshape(len(keys), self.dim))

    def remove(self, keys: Sequence[int]) -> None:
        present = [int(k) for k in keys if int(k) in self._index]
        if present:
            self._index.remove(np.asarray(present, dtype=np.uint64))

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        k = min(k, len(self._index))
        if k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        m = self._index.search(np.asarray(query, dtype=np.float32).reshape(self.dim), k)
        return np.asarray(m.keys, dtype=np.int64), (1.0 - np.asarray(m.distances)).astype(np.float32)


class FaissIndex:
    kind = "faiss"

    def __init__(self, dim: int, capacity: int = 1024, m: int = 16, ef_construction: int = 100, ef: int = 64):
        import faiss
        self._faiss = faiss
        self.dim, self.m, self.efc, self.ef = dim, m, ef_construction, ef
        self._vecs: dict[int, np.ndarray] = {}
        self._removed = 0
        self._stale = False
        self._build()

    def _build(self) -> None:
        f = self._faiss
        base = f.IndexHNSWFlat(self.dim, self.m, f.METRIC_INNER_PRODUCT)
        base.hnsw.efConstruction = self.efc
        base.hnsw.efSearch = self.ef
        self._base = base
        self._index = f.IndexIDMap(base)
        self._removed, self._stale = 0, False
        if self._vecs:
            keys = np.fromiter(self._vecs, dtype=np.int64)
            self._index.add_with_ids(np.stack([self._vecs[int(k)] for k in keys]), keys)

    def __len__(self) -> int:
        return len(self._vecs)

    def upsert(self, keys: Sequence[int], vectors: np.ndarray) -> None:
        vectors = np.asarray(vectors, dtype=np.float32).reshape(len(keys), self.dim)
        fresh_k, fresh_v = [], []
        for k, v in zip(keys, vectors):
            k = int(k)
            if k in self._vecs:
                self._stale = True     # FAISS's HNSW cannot replace a vector: rebuilt before the next search
            else:
                fresh_k.append(k)
                fresh_v.append(v)
            self._vecs[k] = v
        if fresh_k and not self._stale:
            self._index.add_with_ids(np.stack(fresh_v), np.asarray(fresh_k, dtype=np.int64))

    def remove(self, keys: Sequence[int]) -> None:
        for k in keys:
            if self._vecs.pop(int(k), None) is not None:
                self._removed += 1     # masked in searches until a rebuild

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        if self._stale or self._removed > max(64, len(self._vecs) // 4):
            self._build()
        if not self._vecs or k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        want = min(len(self._vecs) + self._removed, k + self._removed)
        self._base.hnsw.efSearch = max(self.ef, want)
        sims, labels = self._index.search(np.asarray(query, dtype=np.float32).reshape(1, self.dim), want)
        keep = [(int(lab), float(sim)) for lab, sim in zip(labels[0], sims[0]) if lab >= 0 and int(lab) in self._vecs][:k]
        return np.asarray([a for a, _ in keep], dtype=np.int64), np.asarray([b for _, b in keep], dtype=np.float32)


class FaissFlatIndex:
    """FAISS's exact inner-product index (``IndexFlatIP``) under an id map: SIMD brute force,
    in-place removal."""
    kind = "faiss-flat"

    def __init__(self, dim: int, capacity: int = 1024):
        import faiss
        faiss.omp_set_num_threads(1)   # one query at a time: a second thread only contends (5 ms vs 36 ms p95)
        self.dim = dim
        self._index = faiss.IndexIDMap2(faiss.IndexFlatIP(dim))
        self._keys: set[int] = set()

    def __len__(self) -> int:
        return len(self._keys)

    def upsert(self, keys: Sequence[int], vectors: np.ndarray) -> None:
        if not len(keys):
            return
        old = [int(k) for k in keys if int(k) in self._keys]
        if old:
            self._index.remove_ids(np.asarray(old, dtype=np.int64))
        self._index.add_with_ids(np.asarray(vectors, dtype=np.float32).reshape(len(keys), self.dim),
                                 np.asarray(keys, dtype=np.int64))
        self._keys.update(int(k) for k in keys)

    def remove(self, keys: Sequence[int]) -> None:
        gone = [int(k) for k in keys if int(k) in self._keys]
        if gone:
            self._index.remove_ids(np.asarray(gone, dtype=np.int64))
            self._keys.difference_update(gone)

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        k = min(k, len(self._keys))
        if k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        sims, labels = self._index.search(np.asarray(query, dtype=np.float32).reshape(1, self.dim), k)
        return labels[0].astype(np.int64), sims[0].astype(np.float32)


class AnnoyIndex:
    kind = "annoy"

    def __init__(self, dim: int, capacity: int = 1024, trees: int = 20):
        from annoy import AnnoyIndex as _Annoy
        self._cls, self.dim, self.trees = _Annoy, dim, trees
        self._vecs: dict[int, np.ndarray] = {}
        self._index = None

    def __len__(self) -> int:
        return len(self._vecs)

    def upsert(self, keys: Sequence[int], vectors: np.ndarray) -> None:
        for k, v in zip(keys, np.asarray(vectors, dtype=np.float32).reshape(len(keys), self.dim)):
            self._vecs[int(k)] = v
        self._index = None

    def remove(self, keys: Sequence[int]) -> None:
        for k in keys:
            self._vecs.pop(int(k), None)
        self._index = None

    def _build(self):
        idx = self._cls(self.dim, "dot")
        for k, v in self._vecs.items():
            idx.add_item(k, v.tolist())
        idx.build(self.trees)
        self._index = idx
        return idx

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        if not self._vecs or k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        idx = self._index or self._build()
        labels, sims = idx.get_nns_by_vector(np.asarray(query, dtype=np.float32).reshape(self.dim).tolist(),
                                             min(k, len(self._vecs)), include_distances=True)
        return np.asarray(labels, dtype=np.int64), np.asarray(sims, dtype=np.float32)


_CLASSES = {"exact": ExactIndex, "faiss-flat": FaissFlatIndex, "hnswlib": HnswlibIndex, "usearch": UsearchIndex, "faiss": FaissIndex,
            "annoy": AnnoyIndex}


def make_index(kind: str, dim: int, capacity: int = 1024) -> VectorIndex:
    if kind not in _CLASSES:
        raise ValueError(f"unknown vector index {kind!r}; known: {', '.join(KINDS)}")
    if not available(kind):
        lib = "faiss-cpu" if kind.startswith("faiss") else kind
        raise IndexUnavailable(f"vector index {kind!r} needs its library (pip install {lib})")
    return _CLASSES[kind](dim, capacity)
