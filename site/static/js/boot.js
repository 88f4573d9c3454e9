// A tiny classic script in <head>: it blocks the parser for a moment so that the Python worker
// starts before the body is parsed and laid out — Pyodide's boot (seconds) then overlaps the page's
// own start-up. The page script (runtime.js) takes the worker over and replays what it said so far.
(() => {
  const html = document.documentElement;
  if (!html.dataset.simZip || typeof Worker === "undefined") return;
  const root = new URL(html.dataset.root || "./", document.baseURI);
  let worker;
  try {
    // worker.js sits beside this script (in the build's fingerprinted folder); its name tells it the sim zip.
    const simZip = new URL(html.dataset.simZip, root).href;
    worker = new Worker(new URL("worker.js", document.currentScript.src), {
      type: "module",
      name: JSON.stringify({ simZip }),
    });
  } catch {
    return; // runtime.js will try again and report the failure
  }
  const early = [];
  worker.onmessage = (event) => early.push(event);
  worker.onerror = (event) => {
    event.preventDefault();
    early.push(event);
  };
  window.inferlabBoot = { worker, early };
})();
