"""`build.py serve`: rebuilds on save, survives a broken save, and recovers on the next one."""

import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import build

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

        mark = len(server.lines)
        lesson.write_text(good.replace("title: 演示课", "title: 改过的课"), encoding="utf-8")
        server.wait_for("built", after=mark)
        assert "<title>改过的课 · inferlab</title>" in server.get("demo/")
        assert server.get("__build_id") != build_id
    finally:
        server.process.terminate()
        server.process.wait(timeout=10)
