// The baseline for the load budget: nothing but Pyodide booting in a module worker.
const worker = new Worker(new URL("./bare-worker.js", import.meta.url), { type: "module" });
worker.onmessage = () => {
  window.__readyAt = performance.now();
  document.getElementById("status").textContent = "ready";
};
