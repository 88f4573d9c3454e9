"""Python kept from page to page: one shared worker serves the next lesson, a reload and other tabs; a memory
snapshot restores Python where none is running (a browser restarted, or one without SharedWorker); never from a
bad or stale snapshot, and never the Python of an older build."""

import json
import shutil

import pytest

import build
from builder.chromium import ARGS, executable
from tests.browser.conftest import (
    ALL_READY,
    READY_TIMEOUT_MS,
    cpython_view,
    eventually,
    some_lessons,
    wait_for_output,
)

# Each test starts from a browser that has never run this site: what it tests is how Python is started or kept.
pytestmark = pytest.mark.own_context

FIRST, NEXT = "prefill-decode/", "inference-vs-training/"

# The saved snapshot, a file in the origin private file system (the page shares the worker's origin): a 4-byte
# header length, a JSON header {key, length, digest}, then Python's memory. The body of an async function: `file`
# as saved, `meta` its header, `write(bytes)` to replace it, and `damaged(how)` the file as `how` damages it: "key",
# its header claims another build; "truncated", its memory cut short; "bytes", a byte inside Python's memory flipped
# (the stored digest no longer matches); "header", the snapshot's own header damaged with the digest recomputed, so
# that only Pyodide's restore can refuse it.
SNAPSHOT_FILE = """
  const root = await navigator.storage.getDirectory();
  let name = null;
  for await (const entry of root.keys()) if (entry.endsWith(".snapshot")) name = entry;
  const handle = await root.getFileHandle(name);
  const file = new Uint8Array(await (await handle.getFile()).arrayBuffer());
  const headerLength = new DataView(file.buffer).getUint32(0, true);
  const meta = JSON.parse(new TextDecoder().decode(file.subarray(4, 4 + headerLength)));
  const write = async (bytes) => {
    const writable = await handle.createWritable();
    await writable.write(bytes);
    await writable.close();
  };
  const damaged = async (how) => {
    const changed = {...meta};
    let bytes = file.slice(4 + headerLength);
    if (how === "key") changed.key = "pyodide 0.0.0 sim-000000000000.zip";
    if (how === "truncated") bytes = bytes.slice(0, bytes.length - 4096);
    if (how === "bytes") bytes[Math.floor(bytes.length / 2)] ^= 0xff;
    if (how === "header") {
      bytes[0] ^= 0xff;
      changed.digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)).join(",");
    }
    const header = new TextEncoder().encode(JSON.stringify(changed));
    const out = new Uint8Array(4 + header.length + bytes.length);
    new DataView(out.buffer).setUint32(0, header.length, true);
    out.set(header, 4);
    out.set(bytes, 4 + header.length);
    return out;
  };
"""
# Damages the saved snapshot; the file's name.
TAMPER = "async (how) => {" + SNAPSHOT_FILE + "  await write(await damaged(how));\n  return name;\n}"
# Whether snapshot.js finds the saved snapshot, intact and then damaged (the file is put back as it was after): the
# page imports the module its worker runs, from the site's script folder.
FOUND_IF = "async (how) => {" + SNAPSHOT_FILE + """
  const script = [...document.scripts].map((s) => s.src).find((src) => src.includes("/static/js-"));
  const { findSnapshot } = await import(new URL("snapshot.js", script));
  const intact = await findSnapshot(meta.key);
  const whole = intact !== null && (await intact.verified);
  await write(await damaged(how));
  const found = await findSnapshot(meta.key);
  await write(file);
  return {intact: whole, damaged: found !== null};
}"""


def visit(page, url: str) -> dict:
    """Open a lesson, wait for every widget and for the worker's after-boot work; the boot's timings."""
    page.goto(url)
    page.wait_for_function(ALL_READY, timeout=READY_TIMEOUT_MS)
    settled = page.evaluate("window.inferlab.runtime.settled")
    return {**page.evaluate("window.inferlab.runtime.timings"), "settled": settled}


def assert_views_equal_cpython(page):
    """Python in this page renders each of its widgets, at the lesson's state, exactly as CPython does."""
    ids = page.eval_on_selector_all("[data-widget]", "els => els.map(e => [e.id, e.dataset.widget])")
    for widget_id, name in ids:
        state = json.loads(page.locator(f"#{widget_id} script.widget-data").text_content())["state"]
        view = page.evaluate("([name, state]) => window.inferlab.runtime.render(name, state)", [name, state])
        assert view == cpython_view(name, state), widget_id


def assert_answers_as_cpython(page):
    """Every widget of the page, including those the first page never imported, answers as CPython does."""
    widget = page.locator("#kv-capacity")
    widget.locator('input[name="batch"]').fill("32")
    state = json.loads(widget.locator("script.widget-data").text_content())["state"]
    wait_for_output(widget, "kv_total", cpython_view("kv-capacity", {**state, "batch": 32})["outputs"]["kv_total"]["value"])
    assert_views_equal_cpython(page)


OLD_DATABASE = "async () => (await indexedDB.databases()).some((db) => db.name === 'inferlab')"


def test_tabs_opened_at_once_share_one_python_which_the_next_page_and_a_reload_share_too(own_page, server):
    # Builds before the snapshot moved to the origin private file system kept it in IndexedDB ("inferlab"): the
    # first snapshot saved removes it.
    own_page.goto(server.url("en/"))
    own_page.evaluate("""() => new Promise((resolve, reject) => {
      const opening = indexedDB.open("inferlab", 1);
      opening.onupgradeneeded = () => opening.result.createObjectStore("python").put(new Blob(["old"]), "snapshot-bytes");
      opening.onsuccess = () => { opening.result.close(); resolve(); };
      opening.onerror = () => reject(opening.error);
    })""")
    assert own_page.evaluate(OLD_DATABASE) is True
    # Two tabs of a browser that has never run Python: one boots it, the other shares it.
    tabs = [own_page, own_page.context.new_page()]
    try:
        for tab in tabs:
            tab.goto(server.url(FIRST), wait_until="commit")
        for tab in tabs:
            tab.wait_for_function(ALL_READY, timeout=READY_TIMEOUT_MS)
        timings = [tab.evaluate("window.inferlab.runtime.timings") for tab in tabs]
        assert sorted(t["shared"] for t in timings) == [False, True]
        booted = tabs[[t["shared"] for t in timings].index(False)]
        assert booted.evaluate("window.inferlab.runtime.timings.restored") is False
        assert booted.evaluate("window.inferlab.runtime.settled") == "saved"
        for tab in tabs:
            assert_views_equal_cpython(tab)
    finally:
        tabs[1].close()
    eventually(own_page, f"async () => !(await ({OLD_DATABASE})())", timeout_s=5)
    following = visit(own_page, server.url(NEXT))
    assert following["shared"] is True and following["settled"] == "saved"
    assert_answers_as_cpython(own_page)
    assert visit(own_page, server.url(NEXT))["shared"] is True  # a reload too


def test_after_a_browser_restart_python_is_restored_and_answers_as_cpython(browser_type, server, tmp_path):
    # A shared worker ends with the browser; the snapshot it saved (through a File, as shared workers have no sync
    # access handles) is what the next day's first page restores.
    def launch():
        return browser_type.launch_persistent_context(tmp_path / "profile", executable_path=executable(shell=True),
                                                       args=ARGS)

    context = launch()
    try:
        first = visit(context.pages[0], server.url(FIRST))
        assert first["restored"] is False and first["settled"] == "saved"
    finally:
        context.close()
    context = launch()
    try:
        page = context.pages[0]
        errors = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        again = visit(page, server.url(NEXT))
        assert again["restored"] is True and again["shared"] is False and again["settled"] == "restored"
        assert again["random"] != first["random"]  # reseeded, not replayed from the snapshot
        assert_answers_as_cpython(page)
        assert errors == []
    finally:
        context.close()


def test_without_shared_workers_later_pages_restore_python_reseeded_and_never_from_a_bad_snapshot(dedicated_worker,
                                                                                                 own_page, server):
    """Each later page restores the snapshot the first saved, with fresh random numbers, and tabs opening together
    share the file; then each way a snapshot can be damaged leads to a normal boot and a new snapshot (one test: both
    start from the same cold boot)."""
    first = visit(own_page, server.url(FIRST))
    assert first["restored"] is False and first["settled"] == "saved"
    following = visit(own_page, server.url(NEXT))
    assert following["restored"] is True and following["shared"] is False and following["settled"] == "restored"
    assert_answers_as_cpython(own_page)
    reload = visit(own_page, server.url(NEXT))  # a reload too
    assert reload["restored"] is True
    # Each restore reseeds: neither replays the draws of the boot that made the snapshot, nor the other's.
    draws = [first["random"], following["random"], reload["random"]]
    assert None not in draws and len(set(draws)) == 3
    # The snapshot file is opened read-only, so tabs that start together share it rather than lock each other out.
    tabs = [own_page.context.new_page() for _ in range(2)]
    try:
        for tab in tabs:
            tab.goto(server.url(NEXT), wait_until="commit")
        for tab in tabs:
            tab.wait_for_function(ALL_READY, timeout=READY_TIMEOUT_MS)
            assert tab.evaluate("window.inferlab.runtime.timings.restored") is True
    finally:
        for tab in tabs:
            tab.close()
    # Refused as it is found (snapshot.js findSnapshot: another build's key, memory cut short): the worker is told
    # there is none, as on a first visit, and boots as a first visit does. Asked of the module itself, in the page.
    for how in ("key", "truncated"):
        assert own_page.evaluate(FOUND_IF, how) == {"intact": True, "damaged": False}, how
    # Refused once the restore is under way (a flipped byte fails the digest; a damaged header of Python's memory,
    # its digest recomputed, fails Pyodide's restore): each leads to a full boot, whose views are CPython's, and
    # to a new snapshot, which the next page restores.
    for how in ("bytes", "header"):
        assert own_page.evaluate(TAMPER, how).endswith(".snapshot"), how
        again = visit(own_page, server.url(NEXT))
        assert again["restored"] is False and again["settled"] == "saved", how
        if how == "bytes":
            assert_views_equal_cpython(own_page)
    assert visit(own_page, server.url(FIRST))["restored"] is True  # the replacement restores


@pytest.mark.parametrize("shared", [True, False], ids=["shared-worker", "dedicated-worker"])
def test_a_rebuilt_simulator_is_never_served_by_the_old_python_or_snapshot(browser, tmp_path, serve, shared):
    kept = "shared" if shared else "restored"  # how a later page of one build finds Python
    sim = tmp_path / "sim"
    shutil.copytree(build.ROOT / "sim", sim, ignore=shutil.ignore_patterns("__pycache__"))
    lessons = some_lessons(tmp_path / "lessons", {FIRST.strip("/"), NEXT.strip("/")})
    paths = build.Paths(out=tmp_path / "_site", sim=sim, lessons=lessons)
    build.build(paths)
    server = serve(paths.out)
    context = browser.new_context()
    if not shared:
        context.add_init_script("delete window.SharedWorker;")
    try:
        page = context.new_page()
        assert visit(page, server.url(FIRST))["settled"] == "saved"
        assert visit(page, server.url(FIRST))[kept] is True
        old_zip = page.get_attribute("html", "data-sim-zip")
        # A redeploy with a changed simulator: a new sim zip, so the old snapshot's key no longer matches.
        (sim / "redeploy.py").write_text('"""A change to the simulator."""\n')
        build.build(paths)
        after = visit(page, server.url(FIRST))
        assert page.get_attribute("html", "data-sim-zip") != old_zip
        assert after["restored"] is False and after["shared"] is False and after["settled"] == "saved"
        assert_views_equal_cpython(page)
        assert visit(page, server.url(NEXT))[kept] is True
    finally:
        context.close()
