"""A TCP relay between the browser and entryd-web, for the offline tests
(test_offline.py) and the offline screenshots (shots.py): the browser reaches
entryd-web through 127.0.0.1:PORT, and stop() cuts the network by closing that
port (DevTools' offline switch does not reach a service worker)."""
import socket, threading


class Relay:
    """127.0.0.1:PORT → entryd-web, byte for byte; stop() closes the port and
    every connection (the browser sees connection refused), start() opens the
    same port again."""

    def __init__(self, target_port):
        self.target = target_port
        self.port = None
        self.server = None
        self.conns = set()
        self.lock = threading.Lock()
        # (old, new) byte strings of equal length replaced both ways (a test
        # makes entryd-web look like another build: its answers, and the
        # browser's If-None-Match that would not match an upgraded server's
        # ETag); empty: byte for byte
        self.rewrite = []
        # True: connections are accepted and never answered (a network that
        # drops packets), until stop()
        self.hang = False

    def start(self):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", self.port or 0))
        s.listen(64)
        self.port = s.getsockname()[1]
        self.server = s
        threading.Thread(target=self._accept, args=(s,), daemon=True).start()

    def _accept(self, server):
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return
            if self.hang:
                with self.lock:
                    self.conns.add(client)
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target))
            except OSError:
                client.close()
                continue
            with self.lock:
                self.conns.update((client, upstream))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, a, b):
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                for old, new in self.rewrite:
                    data = data.replace(old, new)
                b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def stop(self):
        if self.server:
            try:
                self.server.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept(): the port is closed now
            except OSError:
                pass
            self.server.close()
            self.server = None
        with self.lock:
            for s in self.conns:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()
            self.conns.clear()
