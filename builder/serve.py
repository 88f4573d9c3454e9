"""Serving the built site on 127.0.0.1: one HTTP server for `build.py serve`, the browser tests and bench/,
and the watcher that rebuilds on save."""

from __future__ import annotations

import functools
import http.server
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path


class Server:
    """The folder served over HTTP in a background thread; `log` keeps every request line.

    `cache` is the Cache-Control every response carries: "no-cache" (the default) so that a rebuilt page
    is seen on reload; bench/ passes what GitHub Pages sends, to measure repeat visits as students get them.
    `sent_bytes` counts the response bodies sent so far (what a page's visit costs over the network).
    """

    def __init__(self, directory: Path, port: int = 0, cache: str = "no-cache"):
        self.log: list[str] = []
        self.sent_bytes = 0
        log = self.log
        server = self
        counting = threading.Lock()  # the handler threads add to one counter

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, format, *args):  # noqa: A002 - signature fixed by http.server
                log.append(format % args)

            def copyfile(self, source, outputfile):
                while chunk := source.read(1 << 16):
                    try:
                        outputfile.write(chunk)
                    except (BrokenPipeError, ConnectionResetError):
                        # The browser went away mid-download (a tab or a test's context closed, a navigation
                        # cancelled): an everyday event, not a server error with a traceback.
                        log.append(f'"{self.requestline}" left unfinished: the client closed the connection')
                        self.close_connection = True
                        return
                    with counting:
                        server.sent_bytes += len(chunk)

            def end_headers(self):
                self.send_header("Cache-Control", cache)
                super().end_headers()

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port),
                                                     functools.partial(Handler, directory=str(directory)))
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str = "") -> str:
        return f"{self.origin}/{path}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def source_stamp(folders: list[Path]) -> tuple:
    """Names and modification times of every source file: a change in any means rebuild."""
    stamp = []
    for folder in folders:
        for p in folder.rglob("*"):
            if p.is_file() and "__pycache__" not in p.parts:
                stamp.append((str(p), p.stat().st_mtime_ns))
    return tuple(sorted(stamp))


def watch(folders: list[Path], rebuild: list[str], interval_s: float = 0.4) -> None:
    """Run the command `rebuild` whenever a source changes (forever).

    Each rebuild runs in a fresh interpreter so that edits to sim/ and builder/ take effect too; a broken
    save prints its problems and keeps the last good site.
    """
    stamp = source_stamp(folders)
    while True:
        time.sleep(interval_s)
        current = source_stamp(folders)
        if current != stamp:
            stamp = current
            subprocess.run(rebuild, check=False)


def serve(directory: Path, port: int, folders: list[Path], rebuild: list[str],
          announce: Callable[[str], None] = print) -> None:
    """Serve `directory` at 127.0.0.1:port and rebuild on save, until Ctrl-C."""
    threading.Thread(target=watch, args=(folders, rebuild), daemon=True).start()
    server = Server(directory, port)
    announce(f"serving {directory} at {server.origin}/ (Ctrl-C stops)")
    try:
        server.thread.join()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
