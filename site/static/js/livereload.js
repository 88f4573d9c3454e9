// Development only (included by `build.py serve`): reload the page when the site has been rebuilt.
const root = new URL(document.documentElement.dataset.root || "./", document.baseURI);
let seen = null;

async function poll() {
  try {
    const response = await fetch(new URL("__build_id", root), { cache: "no-store" });
    const id = await response.text();
    if (seen !== null && id !== seen) window.location.reload();
    seen = id;
  } catch {
    // The server is restarting: try again on the next tick.
  }
  setTimeout(poll, 250);
}

poll();
