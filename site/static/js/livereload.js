// Development only (included by `build.py serve`): reload the page when the site has been rebuilt. A page in sight
// asks with the build it has, and the server answers once the build changes (builder/serve.py HOLD_S), so the reload
// follows the new site at once; a page out of sight asks every second, leaving the browser's few connections to
// the server for the page being read.
const root = new URL(document.documentElement.dataset.root || "./", document.baseURI);
const HIDDEN_EVERY_MS = 1000;
const RETRY_MS = 250;
let seen = null;

async function poll() {
  let next = RETRY_MS;
  try {
    const visible = document.visibilityState === "visible";
    const url = new URL("__build_id", root);
    if (seen !== null && visible) url.searchParams.set("after", seen);
    const response = await fetch(url, { cache: "no-store" });
    if (response.ok) {
      const id = await response.text();
      if (seen !== null && id !== seen) {
        window.location.reload();
        return;
      }
      seen = id;
      next = visible ? 0 : HIDDEN_EVERY_MS;
    }
  } catch {
    // The server is restarting: try again shortly.
  }
  setTimeout(poll, next);
}

poll();
