"""The process `build.py serve` rebuilds through: it holds the libraries a build imports (Jinja, markdown-it, PyYAML
and the standard library's share), never the project's own modules, and forks a child for each rebuild. A save
then pays neither Python's start nor those imports, and each child imports build.py, builder/ and sim/ afresh, so
an edit to any of them takes effect, as a fresh interpreter would give.

Run as a script, not imported (`python -P builder/rebuild.py ROOT STATUS_FD PYCACHE`; builder/serve.py Rebuilder
starts it): it reads one rebuild per line on stdin (the argument list of `build.py`, as JSON), and writes each
one's exit status as a line to STATUS_FD; it ends with its input. What the build prints goes where this process's
output goes. The children write the project's compiled modules under PYCACHE (`sys.pycache_prefix`), whatever
PYTHONDONTWRITEBYTECODE says: a rebuild compiles builder/ and sim/ once, not on every save, and nothing is
written beside the sources. Each is checked against its source's hash (PEP 552), not its modification time, which
would miss a save of the same length in the same second as the one compiled.

The libraries to hold are learnt from the children: each reports the modules from outside the project it
imported, and the next child is forked with them in memory (the first rebuild is forked from one that has only
imported build.py).
"""

import importlib.util
import json
import os
import py_compile
import sys


def project_module(name: str, module, root: str) -> bool:
    """A module of the project's own: its file (a namespace package's folder) is in `root` and not in the
    environment Python runs in (a .venv there holds libraries); or __main__."""
    where = getattr(module, "__file__", None) or next(iter(getattr(module, "__path__", None) or []), None)
    if name == "__main__":
        return True
    if where is None:
        return False
    where = os.path.abspath(where)
    return where.startswith(root + os.sep) and not where.startswith(os.path.abspath(sys.prefix) + os.sep)


def project_sources(root: str):
    """The project's Python files: those at the top of `root` and in the packages there."""
    for entry in os.scandir(root):
        if entry.is_file() and entry.name.endswith(".py"):
            yield entry.path
        elif entry.is_dir() and os.path.exists(os.path.join(entry.path, "__init__.py")):
            for folder, folders, files in os.walk(entry.path):
                folders[:] = [name for name in folders if name != "__pycache__"]
                yield from (os.path.join(folder, name) for name in files if name.endswith(".py"))


def compile_checked(root: str) -> None:
    """Compile each project file that has no bytecode yet, as bytecode checked by its source's hash; the import
    system keeps it that way when it compiles the file again after a change."""
    for source in project_sources(root):
        target = importlib.util.cache_from_source(source)  # under sys.pycache_prefix
        if not os.path.exists(target):
            try:
                py_compile.compile(source, cfile=target, doraise=True,
                                   invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
            except py_compile.PyCompileError:
                pass  # the build's import reports it


def run_child(root: str, argv: list[str] | None, report_fd: int, pycache: str) -> int:
    """In the forked child: import the project afresh, build (argv None: only import), report the modules from
    outside the project now in memory."""
    sys.path.insert(0, root)
    sys.pycache_prefix, sys.dont_write_bytecode = pycache, False
    status = 0
    try:
        compile_checked(root)
        import build  # noqa: PLC0415 - the point: imported after the fork, afresh each time

        if argv is not None:
            sys.argv = ["build.py", *argv]
            status = build.main(argv)
    except SystemExit as exit_:
        status = exit_.code if isinstance(exit_.code, int) else 1
    except KeyboardInterrupt:  # Ctrl-C in serve's terminal reaches every process of its group
        status = 130
    except BaseException:  # noqa: BLE001 - whatever fails, the child reports it and exits; serve goes on
        import traceback  # noqa: PLC0415

        traceback.print_exc()
        status = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    libraries = sorted(name for name, module in list(sys.modules.items()) if not project_module(name, module, root))
    with os.fdopen(report_fd, "w") as report:
        json.dump(libraries, report)
    return status


def fork_build(root: str, argv: list[str] | None, pycache: str) -> tuple[int, list[str]]:
    """A child forked to run one build: its exit status and the library modules it had imported."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        status = run_child(root, argv, write_fd, pycache)
        os._exit(status)
    os.close(write_fd)
    with os.fdopen(read_fd) as report:
        text = report.read()
    _, wait_status = os.waitpid(pid, 0)
    try:
        libraries = json.loads(text)
    except ValueError:
        libraries = []
    return os.waitstatus_to_exitcode(wait_status), libraries


def hold(libraries: list[str]) -> None:
    """Import what a child imported from outside the project, for the next child to find in memory. One that
    cannot be imported on its own is left to the children."""
    for name in libraries:
        if name not in sys.modules:
            try:
                __import__(name)
            except Exception:  # noqa: BLE001, S110 - any failure only means the next child imports it itself
                pass


def main() -> None:
    root, status_fd, pycache = os.path.abspath(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    try:
        with os.fdopen(status_fd, "w", buffering=1) as statuses:
            _, libraries = fork_build(root, None, pycache)
            hold(libraries)
            for line in sys.stdin:
                status, libraries = fork_build(root, json.loads(line), pycache)
                hold(libraries)
                statuses.write(f"{status}\n")
    except (KeyboardInterrupt, BrokenPipeError):
        pass  # serve is stopping


if __name__ == "__main__":
    main()
