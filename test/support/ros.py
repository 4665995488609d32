"""Node-tier helpers: a private rclpy Context per test, nodes spun by an executor in a thread,
and blocking helpers for calls from the test thread (never from inside callbacks)."""
from __future__ import annotations

import contextlib
import threading
import time

import rclpy
from rclpy.context import Context
from rclpy.executors import MultiThreadedExecutor
from rclpy.parameter import Parameter


@contextlib.contextmanager
def private_context():
    ctx = Context()
    rclpy.init(context=ctx)
    try:
        yield ctx
    finally:
        ctx.try_shutdown()


@contextlib.contextmanager
def spinning(context, *nodes, threads: int = 4):
    executor = MultiThreadedExecutor(num_threads=threads, context=context)
    for n in nodes:
        executor.add_node(n)
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
    try:
        yield executor
    finally:
        executor.shutdown(timeout_sec=2.0)
        for n in nodes:
            n.destroy_node()
        thread.join(timeout=2.0)


def params(**values) -> list[Parameter]:
    return [Parameter(k, value=v) for k, v in values.items()]


def wait_future(future, timeout: float = 10.0):
    done = threading.Event()
    future.add_done_callback(lambda _f: done.set())
    if not done.wait(timeout):
        raise TimeoutError(f"no answer within {timeout} s")
    return future.result()


def call(client, request, timeout: float = 10.0):
    if not client.wait_for_service(timeout_sec=timeout):
        raise TimeoutError(f"service {client.srv_name} not available")
    return wait_future(client.call_async(request), timeout)


def wait_until(predicate, timeout: float = 10.0, interval: float = 0.02, what: str = "condition"):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError(f"{what} not met within {timeout} s")
