"""Serving the built site on 127.0.0.1: one HTTP server for `build.py serve`, the browser tests and bench/,
and the watcher that rebuilds on save."""

from __future__ import annotations

import email.utils
import functools
import gzip
import http.server
import io
import json
import os
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# What is sent gzip-compressed when a Server compresses (as a static host does): everything but files that are
# compressed already.
ALREADY_COMPRESSED = (".zip", ".gz", ".png", ".jpg", ".woff2", ".whl")


# A page of `build.py serve` asks for the site's build id with the one it has (livereload.js): the answer waits until
# the site is rebuilt, or this long, so that the page reloads as soon as the new site is in place.
HOLD_S = 20.0


def _hold_until_changed(build_id: Path, seen: str) -> None:
    deadline = time.monotonic() + HOLD_S
    while time.monotonic() < deadline:
        try:
            if build_id.read_text() != seen:
                return
        except OSError:  # between the old site's rename and the new one's
            pass
        time.sleep(0.02)


@dataclass(frozen=True)
class Link:
    """A slow network between the browser and the server, for bench/: each response waits `latency_s` before its
    headers, and all responses together share `bits_per_s`. In the server rather than Chromium's network
    conditions, which a page's shared worker and service worker requests would pass by."""

    bits_per_s: float
    latency_s: float


class _Pacer:
    """Spends a Link's bandwidth: every chunk waits its turn on one shared line."""

    def __init__(self, link: Link):
        self.link = link
        self.lock = threading.Lock()
        self.free_at = 0.0

    def send(self, n_bytes: int) -> None:
        with self.lock:
            start = max(time.monotonic(), self.free_at)
            self.free_at = start + n_bytes * 8 / self.link.bits_per_s
            done = self.free_at
        time.sleep(max(0.0, done - time.monotonic()))


class Server:
    """The folder served over HTTP in a background thread; `log` keeps every request line.

    `cache` is the Cache-Control every response carries: "no-cache" (the default) so that a rebuilt page
    is seen on reload; bench/ passes what GitHub Pages sends, to measure repeat visits as students get them.
    `sent_bytes` counts the response bodies sent so far (what a page's visit costs over the network).
    bench/ also asks for `compress` (gzip, level 6, to a client that accepts it: the bytes a static host sends) and
    a slow `link`; both are off by default.
    """

    def __init__(self, directory: Path, port: int = 0, cache: str = "no-cache", compress: bool = False,
                 link: Link | None = None):
        self.log: list[str] = []
        self.sent_bytes = 0
        log = self.log
        server = self
        counting = threading.Lock()  # the handler threads add to one counter
        pacer = _Pacer(link) if link else None
        compressed: dict[tuple[str, int], bytes] = {}  # (path, mtime) -> gzip body, made once per file

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, format, *args):  # noqa: A002 - signature fixed by http.server
                log.append(format % args)

            def send_head(self):
                if pacer:
                    time.sleep(pacer.link.latency_s)
                path = self.translate_path(self.path)
                target, _, query = self.path.partition("?")
                if target.endswith("/__build_id") and query.startswith("after="):
                    _hold_until_changed(Path(path), urllib.parse.unquote(query.removeprefix("after=")))
                if os.path.isdir(path) and self.path.split("?")[0].endswith("/"):
                    path = os.path.join(path, "index.html")  # as SimpleHTTPRequestHandler serves a folder
                if not (compress and os.path.isfile(path) and not path.endswith(ALREADY_COMPRESSED)
                        and "gzip" in self.headers.get("Accept-Encoding", "")):
                    return super().send_head()
                mtime = os.stat(path).st_mtime
                since = self.headers.get("If-Modified-Since")
                if since and self._unchanged_since(since, mtime):  # revalidated, as a static host answers
                    self.send_response(304)
                    self.end_headers()
                    return None
                key = (path, os.stat(path).st_mtime_ns)
                if key not in compressed:
                    with open(path, "rb") as f:
                        compressed[key] = gzip.compress(f.read(), compresslevel=6, mtime=0)
                body = compressed[key]
                self.send_response(200)
                self.send_header("Content-Type", self.guess_type(path))
                self.send_header("Content-Encoding", "gzip")
                self.send_header("Vary", "Accept-Encoding")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Last-Modified", self.date_time_string(mtime))
                self.end_headers()
                return io.BytesIO(body)

            @staticmethod
            def _unchanged_since(header: str, mtime: float) -> bool:
                try:
                    return email.utils.parsedate_to_datetime(header).timestamp() >= int(mtime)
                except (TypeError, ValueError):
                    return False

            def copyfile(self, source, outputfile):
                while chunk := source.read(1 << 14 if pacer else 1 << 16):
                    if pacer:
                        pacer.send(len(chunk))
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


def source_stamp(folders: list[Path], ignore: frozenset[Path] = frozenset()) -> tuple:
    """Names and modification times of every source file but those ignored: a change in any means rebuild."""
    stamp = []
    for folder in folders:
        for p in folder.rglob("*"):
            if p.is_file() and "__pycache__" not in p.parts and p not in ignore:
                stamp.append((str(p), p.stat().st_mtime_ns))
    return tuple(sorted(stamp))


class Rebuilder:
    """Runs `build.py` with `argv` once per save. Where the system can fork, through builder/rebuild.py: a process
    that keeps the libraries a build imports and forks a child per rebuild, which imports the project afresh (a
    save pays neither Python's start nor those imports; an edit to sim/ or builder/ still takes effect). The
    children keep the project's compiled modules in the build cache (`pycache`), not beside the sources. Without
    fork, or once that process is gone, each rebuild is a fresh interpreter."""

    def __init__(self, root: Path, argv: list[str], pycache: Path):
        """root: the folder of the project's build.py (and its modules)."""
        self.root, self.argv = root, argv
        self.process: subprocess.Popen | None = None
        if hasattr(os, "fork"):
            read_fd, write_fd = os.pipe()
            self.process = subprocess.Popen(
                [sys.executable, "-P", str(Path(__file__).with_name("rebuild.py")), str(root), str(write_fd),
                 str(pycache)],
                stdin=subprocess.PIPE, pass_fds=(write_fd,), text=True)
            os.close(write_fd)
            self.statuses = os.fdopen(read_fd)

    def __call__(self) -> int:
        """One rebuild, waited for: its exit status."""
        if self.process is not None and self.process.poll() is None:
            try:
                self.process.stdin.write(json.dumps(self.argv) + "\n")
                self.process.stdin.flush()
                if line := self.statuses.readline():
                    return int(line)
            except (OSError, ValueError):
                pass
            self.process = None  # gone: a fresh interpreter from now on
        return subprocess.run([sys.executable, str(self.root / "build.py"), *self.argv], check=False).returncode

    def close(self) -> None:
        if self.process is not None:
            self.process.stdin.close()  # it ends at the end of its input
            self.process.wait()


def watch(folders: list[Path], rebuild: Callable[[], int], interval_s: float = 0.2,
          ignore: frozenset[Path] = frozenset()) -> None:
    """Call `rebuild` whenever a source changes (forever). Files the rebuild itself writes (the frozen figures) are
    in `ignore`: a change there is no save. A broken save prints its problems and keeps the last good site."""
    stamp = source_stamp(folders, ignore)
    while True:
        time.sleep(interval_s)
        current = source_stamp(folders, ignore)
        if current != stamp:
            stamp = current
            rebuild()


def serve(directory: Path, port: int, folders: list[Path], rebuild: Rebuilder,
          announce: Callable[[str], None] = print, ignore: frozenset[Path] = frozenset()) -> None:
    """Serve `directory` at 127.0.0.1:port and rebuild on save (files in `ignore` excepted), until Ctrl-C."""
    threading.Thread(target=watch, args=(folders, rebuild), kwargs={"ignore": ignore}, daemon=True).start()
    server = Server(directory, port)
    announce(f"serving {directory} at {server.origin}/ (Ctrl-C stops)")
    try:
        server.thread.join()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
        rebuild.close()
