// A tiny classic script in <head>: it blocks the parser for a moment so that the Python worker
// starts before the body is parsed and laid out — Pyodide's boot (seconds) then overlaps the page's
// own start-up. The page script (runtime.js) takes the worker over, replays what it said so far, and
// calls start() again for a retry.
//
// The worker is shared where the browser can share it (worker.js says why); its extendedLifetime keeps
// it alive from one lesson to the next, where browsers have that option (others ignore it).
(() => {
  const html = document.documentElement;
  if (!html.dataset.simZip) return;
  const root = new URL(html.dataset.root || "./", document.baseURI);
  // worker.js sits beside this script (in the build's fingerprinted folder); its name tells it the sim zip and
  // the standard library cut for it.
  const script = new URL("worker.js", document.currentScript.src);
  const name = JSON.stringify({ simZip: new URL(html.dataset.simZip, root).href,
                                stdlibZip: new URL(html.dataset.stdlibZip, root).href });
  const options = { type: "module", name };

  // {worker, port}: the port is the one that carries messages (a dedicated worker is its own). Where a shared
  // worker is refused (some sandboxed or private contexts throw), the page gets a dedicated one.
  function start() {
    if (typeof SharedWorker === "function") {
      try {
        const worker = new SharedWorker(script, { ...options, extendedLifetime: true });
        return { worker, port: worker.port };
      } catch {
        // a dedicated worker below
      }
    }
    const worker = new Worker(script, options);
    return { worker, port: worker };
  }

  const boot = { start, early: [] };
  window.inferlabBoot = boot;
  try {
    boot.first = start();
  } catch {
    return; // runtime.js will try again and report the failure
  }
  boot.first.port.onmessage = (event) => boot.early.push(event);
  boot.first.worker.onerror = (event) => {
    event.preventDefault();
    boot.early.push(event);
  };
})();
