"""The service worker the build writes: this build's files with their hashes, a new version when any changes."""

import json
import re
from pathlib import Path

import pytest

import build
from builder.offline import PLACEHOLDER, content_hash, manifest, service_worker


def written_build(site: Path) -> dict:
    source = (site / "sw.js").read_text(encoding="utf-8")
    match = re.search(r"const BUILD = (\{.*?\});\n", source)
    assert match, "sw.js carries the build's manifest"
    return json.loads(match.group(1))


def test_the_site_root_has_a_service_worker_listing_every_asset_with_its_hash(built_site):
    site = built_site
    written = written_build(site)
    assert PLACEHOLDER not in (site / "sw.js").read_text(encoding="utf-8")
    files, later = written["files"], written["later"]
    on_disk = {p.relative_to(site).as_posix() for folder in ("static", "vendor", "py", "pagefind")
               for p in (site / folder).rglob("*") if p.is_file()}
    # The search index is listed (so that search works offline), but not Pagefind's own UI, which no page loads.
    ui = {path for path in on_disk if re.fullmatch(r"pagefind/pagefind-(component-ui|modular-ui|ui|highlight)\.\w+", path)}
    assert ui and "pagefind/pagefind.js" in on_disk
    # Lessons and home pages are kept as visited, never listed; each language's offline page is, by its address.
    assert set(files) | set(later) == (on_disk - ui) | {"offline/", "en/offline/"}
    # A first visit fetches what every page needs; the search index and plotly.js wait until they are used.
    assert not set(files) & set(later)
    assert set(later) == {path for path in on_disk - ui if path.startswith(("pagefind/", "vendor/plotly/"))}
    assert "vendor/plotly/plotly-basic.min.js" in later and "pagefind/pagefind.js" in later
    assert files["en/offline/"] == content_hash((site / "en" / "offline" / "index.html").read_bytes())
    assert written["offline"] == [["en/", "en/offline/"], ["", "offline/"]]
    scripts = next(site.glob("static/js-*")).relative_to(site).as_posix()
    for path in ("vendor/pyodide/pyodide.asm.wasm", f"{scripts}/worker.js", f"{scripts}/snapshot.js"):
        assert files[path] == content_hash((site / path).read_bytes())
    assert any(re.fullmatch(r"py/sim-[0-9a-f]{12}\.zip", path) for path in files)


def test_a_changed_file_is_a_new_version_and_an_unchanged_build_the_same():
    files = {"static/js/page.js": b"one", "vendor/x.js": b"two", "index.html": b"page"}
    first = manifest(files)
    assert list(first["files"]) == ["static/js/page.js", "vendor/x.js"]
    assert manifest(dict(files)) == first
    assert manifest({**files, "index.html": b"another page"}) == first  # pages do not make a new worker
    changed = manifest({**files, "static/js/page.js": b"three"})
    assert changed["version"] != first["version"]
    assert changed["files"]["vendor/x.js"] == first["files"]["vendor/x.js"]


def test_a_template_without_its_placeholder_is_refused(tmp_path):
    template = tmp_path / "sw.js"
    template.write_text("const BUILD = {};\n", encoding="utf-8")
    with pytest.raises(ValueError, match="BUILD"):
        service_worker(template, {})


def test_only_published_pages_register_the_service_worker(built_site, tmp_path):
    # The development server's preview must always show the files just built, never a kept copy.
    published, preview = built_site, tmp_path / "preview"
    build.build(build.Paths(out=preview, dev=True))
    assert 'data-service-worker="sw.js"' in (published / "prefill-decode" / "index.html").read_text(encoding="utf-8")
    assert "data-service-worker" not in (preview / "prefill-decode" / "index.html").read_text(encoding="utf-8")


def test_every_file_named_by_its_hash_is_served_from_the_cache_first(built_site):
    # A hashed name never changes its bytes: asking the network first would cost each boot a round trip per file
    # (the cut standard library's zip, named as the simulator's is, was at first left out of the pattern).
    site = built_site
    source = (site / "sw.js").read_text(encoding="utf-8")
    immutable = re.compile(re.search(r"const IMMUTABLE = /(.*)/;\n", source).group(1).replace(r"\/", "/"))
    hashed = [path for path in written_build(site)["files"] if re.search(r"-[0-9a-f]{8,}(\.\w+|/)", path)]
    assert any(path.startswith("py/stdlib-") for path in hashed)
    assert [path for path in hashed if not immutable.match(path)] == []
