"""``Shared``: one instance per process of something costly (a sentence-embedding model, an
automata compiler, a trained selector), built on first use under a lock, so that threads that
ask at the same time get the same instance and it is built once."""
from __future__ import annotations

import threading
from typing import Callable, Generic, TypeVar

T = TypeVar("T")


class Shared(Generic[T]):
    def __init__(self, factory: Callable[[], T]):
        self._factory = factory
        self._instance: T | None = None
        self._lock = threading.Lock()

    def __call__(self) -> T:
        with self._lock:
            if self._instance is None:
                self._instance = self._factory()
            return self._instance
