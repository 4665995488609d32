"""The episodic memory: interaction examples stored durably in SQLite, retrieved by the
paper's similarity (Bärmann et al., §III-D).

Storage. One SQLite file in WAL mode with ``synchronous=FULL``: a lesson is added in one
transaction, and once :meth:`EpisodicMemory.add` has returned it survives the process being
killed. The schema is versioned (``PRAGMA user_version``); a file written by a newer schema,
a file that is not a memory, a corrupt file and a file another process keeps locked are
reported as :class:`EpisodicMemoryError` naming the file and the cause, so a caller can run on
without learning. Each instruction's embedding is stored with it (float32) together with the
model's name; a memory opened with another encoder is embedded again once.

Retrieval. For the current interaction's instructions ``I_t^1 .. I_t^N`` (``I_t^1`` the most
recent) the request vector is ``e_t = sum_i gamma^(i-1) E(I_t^i)`` (gamma = 0.6); an example
H scores ``S(H) = max_j e_t . E(I_H^j)`` over its instructions, and the top-k examples are
returned best first. The scores of all stored instructions are one matrix-vector product;
the per-example maximum is ``np.maximum.reduceat`` over the rows grouped by example.
Embeddings are unit-length float32 rows of one preallocated matrix (grown by doubling).

Seeds. Prior examples (``data/memory/seed_examples.yaml``) are written into the file on
open and replaced when the seed file (or the encoder) changes; lessons are never touched by
that. Seeds can be listed but not forgotten.
"""
from __future__ import annotations

import contextlib
import hashlib
from collections import OrderedDict
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from raider_ros.memory.embedding import Encoder, shared_encoder, unit_rows
from raider_ros.memory.episode import Episode, EpisodeError

SCHEMA_VERSION = 1
DEFAULT_GAMMA = 0.6
REQUEST_CACHE = 256
APPLICATION_ID = 0x52414944   # "RAID": marks the file as a raider_ros memory

_SCHEMA = (
    """CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
    """CREATE TABLE episodes (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL CHECK (kind IN ('seed', 'lesson')),
        scope TEXT NOT NULL CHECK (scope IN ('task', 'recovery')),
        seed_key TEXT UNIQUE,
        created REAL NOT NULL,
        body TEXT NOT NULL)""",
    """CREATE TABLE instructions (
        episode_id INTEGER NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        text TEXT NOT NULL,
        embedding BLOB NOT NULL,
        PRIMARY KEY (episode_id, position))""",
)


class EpisodicMemoryError(RuntimeError):
    """The memory file cannot be used. ``path`` names the file, ``kind`` is one of
    corrupt | locked | schema | io | encoder, ``cause`` says what happened."""

    def __init__(self, path: str, kind: str, cause: str):
        self.path, self.kind, self.cause = str(path), kind, cause
        super().__init__(f"episodic memory {self.path}: {kind}: {cause}")


class UnknownEpisode(KeyError):
    """No episode with that id (it may have been forgotten)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown episode"


@dataclass(frozen=True)
class Retrieved:
    episode: Episode
    score: float                 # S(H, H_t)
    instruction: str             # the episode's instruction that gave the maximum


def decayed_request(embeddings: np.ndarray, gamma: float) -> np.ndarray:
    """``e_t = sum_i gamma^(i-1) E(I_t^i)`` for rows ordered most recent first (eq. 6)."""
    e = np.asarray(embeddings, dtype=np.float32)
    w = np.power(np.float32(gamma), np.arange(e.shape[0], dtype=np.float32))
    return (w[:, None] * e).sum(axis=0)


def _classify(path: str, exc: BaseException, doing: str) -> EpisodicMemoryError:
    msg = str(exc) or type(exc).__name__
    low = msg.lower()
    if "locked" in low or "busy" in low:
        kind, cause = "locked", f"{doing}: the file is locked by another process or connection ({msg})"
    elif "not a database" in low or "malformed" in low or "corrupt" in low:
        kind, cause = "corrupt", f"{doing}: the file is damaged or not an SQLite database ({msg})"
    else:
        kind, cause = "io", f"{doing}: {msg}"
    return EpisodicMemoryError(path, kind, cause)


class EpisodicMemory:
    """Interaction examples with durable storage and vectorised retrieval. Thread-safe.

    ``path``: the SQLite file (created with its directory), or ``":memory:"`` (nothing kept).
    ``encoder``: see :mod:`raider_ros.memory.embedding`; default the shared MiniLM encoder.
    ``seeds``: ``"default"`` (``data/memory/seed_examples.yaml``), a seed file, a list of
    :class:`Episode`, or None for none. ``busy_timeout_s``: how long a write waits for
    another process's lock before giving up with a ``locked`` error.
    """

    def __init__(self, path: str | Path, *, encoder: Encoder | None = None,
                 seeds: str | Path | Sequence[Episode] | None = "default",
                 busy_timeout_s: float = 2.0, gamma: float = DEFAULT_GAMMA):
        if not 0.0 < float(gamma) <= 1.0:
            raise ValueError(f"gamma must be in (0, 1], got {gamma!r}")
        self.path = str(path)
        self.gamma = float(gamma)
        self._encoder = encoder
        self._lock = threading.RLock()
        self._busy_timeout_s = float(busy_timeout_s)
        self._conn: sqlite3.Connection | None = None
        self._requests: OrderedDict[str, np.ndarray] = OrderedDict()   # recent request embeddings
        self._reset_cache()
        self._open(seeds)

    # ------------------------------------------------------------------ opening
    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            self._encoder = shared_encoder()
        return self._encoder

    def _open(self, seeds) -> None:
        if self.path != ":memory:":
            try:
                Path(self.path).expanduser().parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise EpisodicMemoryError(self.path, "io", f"cannot create the folder: {exc}") from None
        try:
            conn = sqlite3.connect(self.path, timeout=self._busy_timeout_s, isolation_level=None,
                                   check_same_thread=False)
        except sqlite3.Error as exc:
            raise _classify(self.path, exc, "opening") from None
        self._conn = conn
        try:
            with self._errors("opening"):
                mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
                if self.path != ":memory:" and str(mode).lower() != "wal":
                    raise EpisodicMemoryError(self.path, "io", f"cannot switch the journal to WAL (got {mode})")
                conn.execute("PRAGMA synchronous=FULL")
                conn.execute("PRAGMA foreign_keys=ON")
                self._check_schema()
                check = conn.execute("PRAGMA quick_check").fetchone()[0]
                if check != "ok":
                    raise EpisodicMemoryError(self.path, "corrupt", f"integrity check failed: {check}")
            self._load()
            if seeds is not None:
                self._sync_seeds(seeds)
            self._sync_embeddings()
        except BaseException:
            self.close()
            raise

    def _check_schema(self) -> None:
        conn = self._conn
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        app = conn.execute("PRAGMA application_id").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if version == 0 and not tables:
            with self._transaction("creating the schema"):
                for stmt in _SCHEMA:
                    conn.execute(stmt)
                conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            return
        if app != APPLICATION_ID:
            raise EpisodicMemoryError(self.path, "schema", "the file is an SQLite database but not an episodic "
                                                           f"memory (tables: {', '.join(sorted(tables)) or 'none'})")
        if version > SCHEMA_VERSION:
            raise EpisodicMemoryError(self.path, "schema", f"written by schema version {version}; this code reads "
                                                           f"up to version {SCHEMA_VERSION}")
        if version < 1:
            raise EpisodicMemoryError(self.path, "schema", f"unknown schema version {version}")

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._conn.close()
                self._conn = None

    def __enter__(self) -> "EpisodicMemory":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ db helpers
    @contextlib.contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        try:
            yield
        except EpisodicMemoryError:
            raise
        except (sqlite3.Error, OSError) as exc:
            raise _classify(self.path, exc, doing) from None

    @contextlib.contextmanager
    def _transaction(self, doing: str) -> Iterator[sqlite3.Connection]:
        conn = self._require()
        with self._errors(doing):
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def _require(self) -> sqlite3.Connection:
        if self._conn is None:
            raise EpisodicMemoryError(self.path, "io", "the memory is closed")
        return self._conn

    def _meta(self, key: str) -> str | None:
        row = self._require().execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    # ------------------------------------------------------------------ cache
    def _reset_cache(self) -> None:
        self._episodes: dict[int, Episode] = {}
        self._order: list[int] = []             # episode ids in row order
        self._rows_text: list[str] = []
        self._emb = np.zeros((0, 0), dtype=np.float32)   # capacity buffer, rows [:_nrows] used
        self._nrows = 0
        self._starts: list[int] = []
        self._arrays: dict[str, np.ndarray] | None = None

    def _load(self) -> None:
        conn = self._require()
        with self._errors("reading the episodes"):
            eps = conn.execute("SELECT id, created, body FROM episodes ORDER BY id").fetchall()
            rows = conn.execute("SELECT episode_id, position, text, embedding FROM instructions "
                                "ORDER BY episode_id, position").fetchall()
        by_ep: dict[int, list[tuple[str, bytes]]] = {}
        for eid, _pos, text, blob in rows:
            by_ep.setdefault(eid, []).append((text, blob))
        self._reset_cache()
        items = []
        for eid, created, body in eps:
            try:
                ep = Episode.from_body(body, episode_id=eid, created=created)
            except EpisodeError as exc:
                raise EpisodicMemoryError(self.path, "corrupt", f"episode {eid}: {exc}") from None
            items.append((ep, by_ep.get(eid, [])))
        self._append_cached(items)

    def _append_cached(self, items: Sequence[tuple[Episode, list[tuple[str, bytes | np.ndarray]]]]) -> None:
        """Add episodes and their instruction rows to the cache. A row without a usable
        embedding (none stored, or another dimension) is NaN until _sync_embeddings."""
        vectors: list[np.ndarray | None] = []
        for ep, rows in items:
            vecs = [np.frombuffer(b, dtype=np.float32) if isinstance(b, (bytes, memoryview))
                    else np.asarray(b, dtype=np.float32) for _t, b in rows]
            if len(vecs) != len(ep.instructions):
                vecs = [None] * len(ep.instructions)
            self._episodes[ep.id] = ep
            self._order.append(ep.id)
            self._starts.append(self._nrows + len(vectors))
            self._rows_text.extend(ep.instructions)
            vectors.extend(vecs)
        self._arrays = None
        if not vectors:
            return
        dim = self._emb.shape[1] or next((v.shape[0] for v in vectors if v is not None), 0) or 1
        need = self._nrows + len(vectors)
        if self._emb.shape[0] < need or self._emb.shape[1] != dim:
            buf = np.full((max(need, 2 * self._emb.shape[0], 64), dim), np.nan, dtype=np.float32)
            if self._nrows and self._emb.shape[1] == dim:
                buf[: self._nrows] = self._emb[: self._nrows]
            self._emb = buf
        for i, v in enumerate(vectors):
            self._emb[self._nrows + i] = v if v is not None and v.shape == (dim,) else np.nan
        self._nrows = need

    def _filter_arrays(self) -> dict[str, np.ndarray]:
        if self._arrays is None:
            eps = [self._episodes[i] for i in self._order]
            self._arrays = {
                "kind": np.array([e.kind for e in eps], dtype=object),
                "scope": np.array([e.scope for e in eps], dtype=object),
                "task": np.array([e.task or "" for e in eps], dtype=object),
                "category": np.array([e.category or "" for e in eps], dtype=object),
                "action": np.array([e.action or "" for e in eps], dtype=object),
                "starts": np.array(self._starts, dtype=np.int64),
            }
        return self._arrays

    # ------------------------------------------------------------------ embeddings
    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        try:
            out = unit_rows(self.encoder.encode(list(texts)))
        except Exception as exc:  # noqa: BLE001 - the model failing is a memory error the caller can handle
            raise EpisodicMemoryError(self.path, "encoder", f"cannot embed: {type(exc).__name__}: {exc}") from None
        if out.shape[0] != len(texts):
            raise EpisodicMemoryError(self.path, "encoder", f"the encoder returned {out.shape[0]} rows "
                                                            f"for {len(texts)} texts")
        return out

    def _embed_requests(self, texts: Sequence[str]) -> np.ndarray:
        """Request embeddings; the last REQUEST_CACHE are kept, since a run asks about the same
        request several times (its task plan, each recovery, the prompt)."""
        with self._lock:
            local = {t: self._requests[t] for t in texts if t in self._requests}
            for t in local:
                self._requests.move_to_end(t)
        missing = [t for t in dict.fromkeys(texts) if t not in local]
        if missing:
            vecs = self._embed(missing)
            local.update(zip(missing, vecs))
            with self._lock:
                for t, v in zip(missing, vecs):
                    self._requests[t] = v
                while len(self._requests) > REQUEST_CACHE:
                    self._requests.popitem(last=False)
        return np.stack([local[t] for t in texts])

    def _sync_embeddings(self) -> None:
        """Embed the rows that have no embedding, or every row when the stored embeddings come
        from another model; written back in one transaction."""
        if self._nrows == 0:
            return
        name = getattr(self.encoder, "name", type(self.encoder).__name__)
        stale = np.isnan(self._emb[: self._nrows]).any(axis=1)
        if self._meta("embedding_model") == name and not stale.any():
            return
        redo = np.arange(self._nrows) if self._meta("embedding_model") != name else np.flatnonzero(stale)
        vecs = self._embed([self._rows_text[i] for i in redo])
        if vecs.shape[1] != self._emb.shape[1]:
            if len(redo) != self._nrows:
                redo = np.arange(self._nrows)
                vecs = self._embed(self._rows_text[: self._nrows])
            self._emb = np.full((max(self._nrows, 64), vecs.shape[1]), np.nan, dtype=np.float32)
        self._emb[redo] = vecs
        row_of = {}
        for k, eid in enumerate(self._order):
            for pos in range(len(self._episodes[eid].instructions)):
                row_of[self._starts[k] + pos] = (eid, pos)
        with self._transaction("storing embeddings") as conn:
            for i, v in zip(redo.tolist(), vecs):
                eid, pos = row_of[i]
                conn.execute("INSERT OR REPLACE INTO instructions (episode_id, position, text, embedding) "
                             "VALUES (?, ?, ?, ?)", (eid, pos, self._rows_text[i], v.astype(np.float32).tobytes()))
            conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('embedding_model', ?)", (name,))

    # ------------------------------------------------------------------ seeds
    def _sync_seeds(self, seeds) -> None:
        if isinstance(seeds, (str, Path)):
            from raider_ros.memory.seeds import load_seeds
            seed_eps = load_seeds(None if seeds == "default" else seeds)
        else:
            seed_eps = list(seeds)
        for e in seed_eps:
            if e.kind != "seed" or not e.key:
                raise EpisodeError(f"seed {e.request!r}: a seed needs kind 'seed' and a key")
        digest = hashlib.sha256("\n".join(e.to_body() for e in seed_eps).encode()).hexdigest()
        with self._lock:
            if self._meta("seeds_digest") == digest:
                return
            now = time.time()
            with self._transaction("writing the seed examples") as conn:
                conn.execute("DELETE FROM episodes WHERE kind='seed'")
                for e in seed_eps:
                    conn.execute("INSERT INTO episodes (kind, scope, seed_key, created, body) VALUES (?, ?, ?, ?, ?)",
                                 (e.kind, e.scope, e.key, now, e.to_body()))
                conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('seeds_digest', ?)", (digest,))
            self._load()

    # ------------------------------------------------------------------ public API
    def add(self, episode: Episode) -> Episode:
        """Store a lesson (one transaction) and return it with its id. When this returns, the
        lesson is on disk. Raises :class:`EpisodicMemoryError` (then nothing was stored)."""
        if not isinstance(episode, Episode):
            raise TypeError(f"expected an Episode, got {type(episode).__name__}")
        if episode.kind != "lesson":
            raise EpisodeError("only lessons are added; seeds come from the seed file")
        vecs = self._embed(list(episode.instructions))
        with self._lock:
            now = time.time()
            with self._transaction("storing a lesson") as conn:
                cur = conn.execute("INSERT INTO episodes (kind, scope, seed_key, created, body) VALUES (?, ?, NULL, ?, ?)",
                                   (episode.kind, episode.scope, now, episode.to_body()))
                eid = int(cur.lastrowid)
                for pos, (text, v) in enumerate(zip(episode.instructions, vecs)):
                    conn.execute("INSERT INTO instructions (episode_id, position, text, embedding) VALUES (?, ?, ?, ?)",
                                 (eid, pos, text, v.astype(np.float32).tobytes()))
                name = getattr(self.encoder, "name", type(self.encoder).__name__)
                conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('embedding_model', ?)", (name,))
            stored = episode.with_id(eid, now)
            self._append_cached([(stored, [(t, v) for t, v in zip(episode.instructions, vecs)])])
            return stored

    def add_many(self, episodes: Sequence[Episode]) -> list[Episode]:
        """Store many lessons in one transaction (an import); all or none are stored."""
        eps = list(episodes)
        for e in eps:
            if not isinstance(e, Episode) or e.kind != "lesson":
                raise EpisodeError("add_many: only lessons (Episode with kind 'lesson') are added")
        if not eps:
            return []
        texts = [t for e in eps for t in e.instructions]
        vecs = self._embed(texts)
        with self._lock:
            now = time.time()
            stored, k = [], 0
            name = getattr(self.encoder, "name", type(self.encoder).__name__)
            with self._transaction("storing lessons") as conn:
                for e in eps:
                    cur = conn.execute("INSERT INTO episodes (kind, scope, seed_key, created, body) "
                                       "VALUES (?, ?, NULL, ?, ?)", (e.kind, e.scope, now, e.to_body()))
                    eid = int(cur.lastrowid)
                    rows = []
                    for pos, text in enumerate(e.instructions):
                        rows.append((eid, pos, text, vecs[k].astype(np.float32).tobytes()))
                        k += 1
                    conn.executemany("INSERT INTO instructions (episode_id, position, text, embedding) "
                                     "VALUES (?, ?, ?, ?)", rows)
                    stored.append(e.with_id(eid, now))
                conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('embedding_model', ?)", (name,))
            k = 0
            items = []
            for e in stored:
                n = len(e.instructions)
                items.append((e, [(t, vecs[k + j]) for j, t in enumerate(e.instructions)]))
                k += n
            self._append_cached(items)
            return stored

    def get(self, episode_id: int) -> Episode:
        with self._lock:
            try:
                return self._episodes[int(episode_id)]
            except (KeyError, TypeError, ValueError):
                raise UnknownEpisode(f"no episode {episode_id!r} in {self.path} (forgotten, or never stored)") from None

    def list(self, *, kind: str | None = None, scope: str | None = None) -> list[Episode]:
        """Episodes in the order they were stored (seeds first)."""
        with self._lock:
            return [e for i in self._order for e in (self._episodes[i],)
                    if (kind is None or e.kind == kind) and (scope is None or e.scope == scope)]

    def lessons(self) -> list[Episode]:
        return self.list(kind="lesson")

    def forget(self, episode_id: int) -> Episode:
        """Delete a lesson (one transaction) and return what was deleted; seeds cannot be forgotten."""
        with self._lock:
            ep = self.get(episode_id)
            if ep.kind != "lesson":
                raise EpisodeError(f"episode {episode_id} is a seed example (prior knowledge from the seed file); "
                                   "only lessons can be forgotten")
            with self._transaction("forgetting a lesson") as conn:
                conn.execute("DELETE FROM episodes WHERE id=?", (ep.id,))
            keep = [(self._episodes[i], self._rows_of(k)) for k, i in enumerate(self._order) if i != ep.id]
            self._reset_cache()
            self._append_cached(keep)
            return ep

    def _rows_of(self, k: int) -> list[tuple[str, np.ndarray]]:
        start = self._starts[k]
        n = len(self._episodes[self._order[k]].instructions)
        return [(self._rows_text[start + j], self._emb[start + j].copy()) for j in range(n)]

    def __len__(self) -> int:
        with self._lock:
            return len(self._order)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(list(texts))

    def retrieve(self, instructions: str | Sequence[str], *, k: int = 8, gamma: float | None = None,
                 recent: int | None = None, scope: str | None = None, kind: str | None = None,
                 task: str | None = None, category: str | None = None, action: str | None = None,
                 request_embedding: np.ndarray | None = None) -> list[Retrieved]:
        """The top-``k`` episodes by S(H, H_t), best first.

        ``instructions``: the current interaction's instructions in the order they were said
        (a single string is one instruction); the last one is the most recent and weighs 1,
        the one before gamma, and so on. ``recent`` keeps only the N most recent. The keyword
        filters keep episodes whose field equals the value. ``request_embedding``: e_t given
        directly (the instructions are then only used for nothing else).
        """
        if k < 1:
            return []
        g = self.gamma if gamma is None else float(gamma)
        if request_embedding is None:
            texts = [instructions] if isinstance(instructions, str) else [t for t in instructions]
            texts = [t.strip() for t in texts if isinstance(t, str) and t.strip()]
            if not texts:
                raise ValueError("retrieve: no instruction given")
            texts = texts[::-1][: recent or len(texts)]
            e_t = decayed_request(self._embed_requests(texts), g)
        else:
            e_t = np.asarray(request_embedding, dtype=np.float32).ravel()
        with self._lock:
            n = len(self._order)
            if n == 0:
                return []
            arr = self._filter_arrays()
            # einsum: one thread, no BLAS pool (a BLAS pool waiting for busy cores is slower)
            scores = np.einsum("ij,j->i", self._emb[: self._nrows], e_t)
            per_ep = np.maximum.reduceat(scores, arr["starts"])
            mask = np.ones(n, dtype=bool)
            for name, value in (("kind", kind), ("scope", scope), ("task", task), ("category", category),
                                ("action", action)):
                if value is not None:
                    mask &= arr[name] == value
            count = int(mask.sum())
            if count == 0:
                return []
            per_ep = np.where(mask, per_ep, -np.inf)
            kk = min(k, count)
            top = np.argpartition(-per_ep, kk - 1)[:kk] if kk < n else np.arange(n)
            top = top[np.argsort(-per_ep[top], kind="stable")][:kk]
            out = []
            for t in top.tolist():
                ep = self._episodes[self._order[t]]
                s = int(arr["starts"][t])
                j = int(np.argmax(scores[s: s + len(ep.instructions)]))
                out.append(Retrieved(ep, float(per_ep[t]), ep.instructions[j]))
            return out
