"""`build.py serve`: rebuilds on save, survives a broken save, and recovers on the next one; the Server's
compression and slow link that bench/ asks for."""

import gzip
import re
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import build
from builder import serve as build_serve
from builder.serve import Link, Server

HERE = Path(__file__).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Serve:
    def __init__(self, lessons: Path, out: Path):
        self.port = free_port()
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            [sys.executable, "build.py", "serve", "--port", str(self.port), "--lessons", str(lessons), "--out", str(out)],
            cwd=build.ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.append(line.rstrip())

    def wait_for(self, text: str, after: int = 0, timeout_s: float = 20) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if any(text in line for line in self.lines[after:]):
                return
            time.sleep(0.05)
        raise AssertionError(f"{text!r} not printed; output:\n" + "\n".join(self.lines))

    def get(self, path: str) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/{path}", timeout=5) as response:
            return response.read().decode()


def test_serve_survives_a_broken_save_and_recovers(tmp_path):
    lessons = tmp_path / "lessons"
    shutil.copytree(HERE / "lessons", lessons)
    lesson = lessons / "zh" / "demo.md"
    good = lesson.read_text(encoding="utf-8")
    server = Serve(lessons, tmp_path / "_site")
    try:
        server.wait_for("serving")
        page = server.get("demo/")
        assert "<title>演示课 · inferlab</title>" in page
        assert re.search(r"static/js-[0-9a-f]{12}/livereload\.js", page)  # served pages reload after a rebuild
        build_id = server.get("__build_id")

        mark = len(server.lines)
        lesson.write_text(good.replace("T: 2048", "T: -1"), encoding="utf-8")
        server.wait_for("demo.md:13: widget roofline: T must be a whole number", after=mark)
        server.wait_for("the previous site is unchanged", after=mark)
        assert server.get("demo/") == page and server.get("__build_id") == build_id

        # A save that adds a computed figure: the rebuild writes it to the lessons' frozen figures, and that write
        # is no save (no second rebuild follows).
        mark = len(server.lines)
        english = lessons / "en" / "demo.md"  # every language of a lesson evaluates the same figures
        english.write_text(english.read_text(encoding="utf-8") + "\nOne more: {sim}`grouped(128 * 7)`.\n",
                           encoding="utf-8")
        lesson.write_text(good.replace("title: 演示课", "title: 改过的课") + "\n又一个数：{sim}`grouped(128 * 7)`。\n",
                          encoding="utf-8")
        server.wait_for("built", after=mark)
        assert "<title>改过的课 · inferlab</title>" in server.get("demo/") and "896" in server.get("demo/")
        assert server.get("__build_id") != build_id
        assert re.search(r'"grouped\(128 \* 7\)": \["[0-9a-f]{16}","896"\]', (lessons / "frozen.json").read_text(encoding="utf-8"))
        time.sleep(6)  # a rebuild takes 2-3 s
        assert sum("built" in line for line in server.lines[mark:]) == 1, server.lines[mark:]
    finally:
        server.process.terminate()
        server.process.wait(timeout=10)


def test_a_client_that_leaves_mid_download_is_logged_not_a_traceback(tmp_path, capfd):
    (tmp_path / "big.bin").write_bytes(bytes(8 << 20))
    (tmp_path / "small.txt").write_text("still here")
    server = Server(tmp_path)
    try:
        with socket.create_connection(("127.0.0.1", server.httpd.server_address[1])) as client:
            client.sendall(b"GET /big.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert client.recv(1 << 12).startswith(b"HTTP/1.0 200")
            # Reset, not a polite close: the server's next write fails at once.
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        deadline = time.monotonic() + 10
        while not any("left unfinished" in line for line in server.log):
            assert time.monotonic() < deadline, server.log
            time.sleep(0.05)
        with urllib.request.urlopen(server.url("small.txt"), timeout=5) as response:
            assert response.read() == b"still here"
    finally:
        server.close()
    assert "Traceback" not in capfd.readouterr().err
    assert server.sent_bytes < 8 << 20


def test_a_compressing_server_sends_gzip_to_a_client_that_accepts_it_and_revalidates(tmp_path):
    text = "a lesson page " * 1000
    (tmp_path / "page").mkdir()
    (tmp_path / "page" / "index.html").write_text(text)
    (tmp_path / "python.zip").write_bytes(bytes(range(256)) * 40)
    server = Server(tmp_path, compress=True)
    try:
        ask = {"Accept-Encoding": "gzip"}
        with urllib.request.urlopen(urllib.request.Request(server.url("page/"), headers=ask)) as response:
            body, modified = response.read(), response.headers["Last-Modified"]
            assert response.headers["Content-Encoding"] == "gzip" and gzip.decompress(body).decode() == text
        deadline = time.monotonic() + 5  # the handler thread counts a chunk once it has written it
        while server.sent_bytes < len(body) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert server.sent_bytes == len(body) < len(text) / 10
        with urllib.request.urlopen(urllib.request.Request(server.url("python.zip"), headers=ask)) as response:
            assert response.headers["Content-Encoding"] is None  # compressed already: sent as it is
        with urllib.request.urlopen(server.url("page/index.html")) as response:
            assert response.read().decode() == text  # a client that asks for no gzip gets none
        revalidate = urllib.request.Request(server.url("page/"), headers={**ask, "If-Modified-Since": modified})
        try:
            urllib.request.urlopen(revalidate)
            raise AssertionError("expected 304 Not Modified")
        except urllib.error.HTTPError as e:
            assert e.code == 304
    finally:
        server.close()


def test_a_slow_link_paces_every_response_on_one_line(tmp_path):
    (tmp_path / "a.bin").write_bytes(bytes(62_500))  # 0.05 s at 10 Mbit/s
    (tmp_path / "b.bin").write_bytes(bytes(62_500))
    server = Server(tmp_path, link=Link(bits_per_s=10e6, latency_s=0.04))
    try:
        start = time.monotonic()
        threads = [threading.Thread(target=lambda name=name: urllib.request.urlopen(server.url(name)).read())
                   for name in ("a.bin", "b.bin")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # both together share the line: 0.1 s of bytes, after 0.04 s of latency
        assert time.monotonic() - start >= 0.14
    finally:
        server.close()


def test_a_page_asking_with_its_build_id_is_answered_once_the_site_is_rebuilt(tmp_path):
    (tmp_path / "__build_id").write_text("one")
    server = Server(tmp_path)
    answers: list[tuple[str, float]] = []

    def ask(after: str) -> None:
        with urllib.request.urlopen(server.url(f"__build_id?after={after}"), timeout=10) as response:
            answers.append((response.read().decode(), time.monotonic()))

    try:
        ask("older")  # a page that has another build reloads at once
        assert answers[0][0] == "one"
        waiting = threading.Thread(target=ask, args=("one",))
        waiting.start()
        time.sleep(0.5)
        assert len(answers) == 1  # the page that has this build is answered only once there is a new one
        rebuilt = time.monotonic()
        (tmp_path / "__build_id.new").write_text("two")
        (tmp_path / "__build_id.new").replace(tmp_path / "__build_id")
        waiting.join(timeout=5)
        assert answers[1][0] == "two" and answers[1][1] - rebuilt < 0.5
    finally:
        server.close()


def test_each_rebuild_imports_the_project_afresh_and_keeps_its_bytecode_in_the_cache(tmp_path):
    """serve's Rebuilder forks each rebuild from a process that holds the libraries: an edit to the project's
    own modules is seen by the next rebuild, its exit status comes back, and no bytecode lands beside the sources."""
    project, pycache, out = tmp_path / "project", tmp_path / "cache" / "pycache", tmp_path / "out.txt"
    (project / "parts").mkdir(parents=True)
    (project / "parts" / "__init__.py").write_text("")
    (project / "parts" / "answer.py").write_text("VALUE = 1\n")
    (project / "build.py").write_text(
        "import sys\nfrom pathlib import Path\nimport parts.answer\n\n\n"
        "def main(argv):\n"
        "    Path(argv[0]).write_text(str(parts.answer.VALUE))\n"
        "    return parts.answer.VALUE\n")
    rebuild = build_serve.Rebuilder(project, [str(out)], pycache=pycache)
    try:
        assert rebuild() == 1 and out.read_text() == "1"
        (project / "parts" / "answer.py").write_text("VALUE = 11\n")
        assert rebuild() == 11 and out.read_text() == "11"
        # A save of the same length, within the second: bytecode checked by its time and size would be taken.
        (project / "parts" / "answer.py").write_text("VALUE = 22\n")
        assert rebuild() == 22 and out.read_text() == "22"
    finally:
        rebuild.close()
    assert not list(project.rglob("__pycache__"))
    assert list(pycache.rglob("answer*.pyc"))
