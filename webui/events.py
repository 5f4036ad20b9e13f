"""The event bus behind Server-Sent Events: one bounded queue per client.

``publish`` never blocks: a client whose queue is full (a phone that stopped reading) is dropped
and its stream ends; a client that disconnects unsubscribes in the stream's ``finally``.
"""

from __future__ import annotations

import contextlib
import json
import queue
import threading
from collections.abc import Iterator

CLOSED = object()  # sentinel put in a dropped client's queue


class Subscriber:
    def __init__(self, size: int):
        self.queue: queue.Queue = queue.Queue(maxsize=size)
        self.dropped = False


class EventBus:
    def __init__(self, queue_size: int = 32):
        self.queue_size = queue_size
        self._lock = threading.Lock()
        self._subscribers: set[Subscriber] = set()

    def subscribe(self) -> Subscriber:
        subscriber = Subscriber(self.queue_size)
        with self._lock:
            self._subscribers.add(subscriber)
        return subscriber

    def unsubscribe(self, subscriber: Subscriber) -> None:
        with self._lock:
            self._subscribers.discard(subscriber)

    @property
    def clients(self) -> int:
        with self._lock:
            return len(self._subscribers)

    def publish(self, kind: str, data: dict) -> None:
        """Send one event to every client (formatted once)."""
        self.publish_text(format_event(kind, data))

    def publish_text(self, message: str) -> None:
        with self._lock:
            subscribers = list(self._subscribers)
        for subscriber in subscribers:
            try:
                subscriber.queue.put_nowait(message)
            except queue.Full:
                self._drop(subscriber)

    def _drop(self, subscriber: Subscriber) -> None:
        subscriber.dropped = True
        self.unsubscribe(subscriber)
        with contextlib.suppress(queue.Empty):  # make room for the sentinel: the stream ends
            subscriber.queue.get_nowait()
        with contextlib.suppress(queue.Full):
            subscriber.queue.put_nowait(CLOSED)

    def close_all(self) -> None:
        with self._lock:
            subscribers = list(self._subscribers)
        for subscriber in subscribers:
            self._drop(subscriber)

    def stream(self, first: str | None, keepalive: float) -> Iterator[str]:
        """The text of one client's event stream: ``first``, then events, with keep-alive comments."""
        subscriber = self.subscribe()
        try:
            yield "retry: 2000\n\n"
            if first:
                yield first
            while True:
                try:
                    message = subscriber.queue.get(timeout=keepalive)
                except queue.Empty:
                    yield ": keep-alive\n\n"
                    continue
                if message is CLOSED:
                    return
                yield message
        finally:
            self.unsubscribe(subscriber)


def format_event(kind: str, data: dict) -> str:
    return f"event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"
