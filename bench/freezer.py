"""A TCP proxy on 127.0.0.1 that can stop forwarding: a database that accepts connections and
never answers (a frozen server, a network that drops everything past the handshake, a proxy
that hangs), without touching the real server.

    proxy = Freezer("127.0.0.1", 5432).start()
    url = f"postgresql://postgres@127.0.0.1:{proxy.port}/db"
    proxy.freeze()   # connections still accepted, nothing forwarded either way
    proxy.thaw()     # forwarding again; what was held is passed on
    proxy.stop()

Used by tests/store/test_store_frozen.py and bench/redteam.py (issue 38, item 3). Every
thread is a daemon and every wait is bounded (0.05 s polls), so a test never hangs on it.
"""
from __future__ import annotations

import contextlib
import select
import socket
import threading

__all__ = ["Freezer"]

_POLL = 0.05  # [s]


class Freezer:
    """Forwards 127.0.0.1:``port`` (a free one) to ``host``:``target_port`` until frozen."""

    def __init__(self, host: str, target_port: int):
        self.target = (host, target_port)
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(128)
        self.port = self._listener.getsockname()[1]
        self._frozen = threading.Event()
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self.accepted = 0  # connections accepted so far (frozen or not)

    def start(self) -> Freezer:
        threading.Thread(target=self._accept, daemon=True, name="freezer-accept").start()
        return self

    def freeze(self) -> None:
        """Stop forwarding: bytes either way stay where they are; new connections are
        accepted (the handshake completes) and never answered."""
        self._frozen.set()

    def thaw(self) -> None:
        self._frozen.clear()

    @property
    def frozen(self) -> bool:
        return self._frozen.is_set()

    def stop(self) -> None:
        self._stopped.set()
        with contextlib.suppress(OSError):
            self._listener.close()
        with self._lock:
            for s in self._open:
                with contextlib.suppress(OSError):
                    s.close()
            self._open.clear()

    def __enter__(self) -> Freezer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _accept(self) -> None:
        self._listener.settimeout(_POLL)
        while not self._stopped.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._pair, args=(client,), daemon=True,
                             name="freezer-pair").start()

    def _pair(self, client: socket.socket) -> None:
        # a connection made while frozen is not forwarded (not even connected on) until thawed
        while self._frozen.is_set() and not self._stopped.is_set():
            self._stopped.wait(_POLL)
        try:
            upstream = socket.create_connection(self.target, timeout=5)
        except OSError:
            client.close()
            return
        with self._lock:
            self._open.update((client, upstream))
        peers = {client: upstream, upstream: client}
        try:
            while not self._stopped.is_set():
                if self._frozen.is_set():
                    self._stopped.wait(_POLL)
                    continue
                ready, _, _ = select.select(list(peers), [], [], _POLL)
                for s in ready:
                    data = s.recv(65536)
                    if not data:
                        return  # one side closed: close both
                    peers[s].sendall(data)
        except OSError:
            return
        finally:
            with self._lock:
                self._open.discard(client)
                self._open.discard(upstream)
            for s in (client, upstream):
                with contextlib.suppress(OSError):
                    s.close()
