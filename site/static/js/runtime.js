// The page's handle on the Python worker (shared or dedicated): boot, status, and render requests as promises.

// A boot that fails says so at once (the worker reports every start-up error); this only catches a download that
// stalls without failing.
const BOOT_TIMEOUT_MS = 90_000;

// The Python worker for this page, {worker, port} (the port carries the messages; a dedicated worker is its own).
// It is shared where the browser can share it (worker.js says why); extendedLifetime keeps it alive from one
// lesson to the next where browsers have that option (others ignore it). Where a shared worker is refused (some
// sandboxed or private contexts throw), the page gets a dedicated one. Its name tells it the sim zip and the
// standard library cut for it, and its role: "main", or "slow" for the worker that runs only the slow widgets'
// renders (page.js), a shared worker of its own.
function openWorker(role) {
  const html = document.documentElement;
  const root = new URL(html.dataset.root || "./", document.baseURI);
  const name = JSON.stringify({ simZip: new URL(html.dataset.simZip, root).href,
                                stdlibZip: new URL(html.dataset.stdlibZip, root).href,
                                ...(role === "main" ? {} : { role }) });
  const script = new URL("./worker.js", import.meta.url);
  const options = { type: "module", name };
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

export class Runtime {
  constructor(role = "main") {
    this.role = role;
    this.widgetNames = null; // set by useWidgets() once the page is parsed
    this.listeners = new Set();
    this.status = "loading";
    this.detail = "";
    this.pending = new Map(); // seq -> {resolve, reject}
    this.seq = 0;
    this.worker = null;
    this.port = null; // what carries the messages: the dedicated worker itself, or the shared worker's port
    // Resolves once the worker's after-boot work is over (a snapshot saved for the next page, or none needed):
    // with the value "saved", "restored", "refused" or "failed".
    this.settled = new Promise((resolve) => { this.reportSettled = resolve; });
    // A page gone for good (not kept in the back-forward cache) tells a shared worker, which would otherwise
    // keep it among the pages it writes to.
    window.addEventListener("pagehide", (event) => {
      if (!event.persisted && this.port && !this.worker?.terminate) this.port.postMessage({ type: "bye" });
    });
  }

  onStatus(listener) {
    this.listeners.add(listener);
    listener(this.status, this.detail);
  }

  setStatus(status, detail = "") {
    this.status = status;
    this.detail = detail;
    for (const listener of this.listeners) listener(status, detail);
  }

  start() {
    this.stop();
    this.setStatus("loading", "python");
    let started;
    try {
      started = openWorker(this.role);
    } catch (error) {
      this.setStatus("failed", String(error?.message ?? error));
      return;
    }
    const { worker, port } = started;
    this.worker = worker;
    this.port = port;
    const timer = setTimeout(() => this.fail("timeout"), BOOT_TIMEOUT_MS);
    port.onmessage = (event) => {
      const message = event.data;
      if (message.type === "progress") this.setStatus("loading", message.stage);
      else if (message.type === "ready") {
        clearTimeout(timer);
        this.timings = message.timings;
        this.setStatus("ready");
      } else if (message.type === "settled") this.reportSettled(message.snapshot);
      else if (message.type === "failed") {
        clearTimeout(timer);
        this.fail(message.message);
      } else if (message.type === "view" || message.type === "error") this.settle(message);
    };
    // A worker whose module cannot be fetched or evaluated fires "error" on the Worker object.
    worker.onerror = (event) => {
      event.preventDefault?.();
      clearTimeout(timer);
      this.fail(event.message || "the Python worker could not start");
    };
    if (this.widgetNames) port.postMessage({ type: "widgets", names: this.widgetNames });
  }

  // The widget modules the page needs; Python imports them as soon as it is up.
  useWidgets(names) {
    this.widgetNames = names;
    this.port?.postMessage({ type: "widgets", names });
  }

  fail(detail) {
    this.stop();
    this.setStatus("failed", detail);
  }

  // A dedicated worker is ended; a shared one serves other pages, and is only told this page has left.
  stop() {
    if (this.worker?.terminate) this.worker.terminate();
    else if (this.port) {
      this.port.postMessage({ type: "bye" });
      this.port.close();
    }
    this.worker = null;
    this.port = null;
    for (const { reject } of this.pending.values()) reject(new Error("the Python worker stopped"));
    this.pending.clear();
  }

  settle(message) {
    const request = this.pending.get(message.seq);
    if (!request) return;
    this.pending.delete(message.seq);
    // The last answer's cost, for bench/: the whole round trip, and the part of it spent in Python.
    this.lastRender = { roundTripMs: performance.now() - request.sent, pythonMs: message.pythonMs };
    if (message.type === "view") request.resolve(JSON.parse(message.json));
    else request.reject(new Error(message.message));
  }

  render(widget, state) {
    if (this.status !== "ready") return Promise.reject(new Error("Python is not ready"));
    const seq = ++this.seq;
    return new Promise((resolve, reject) => {
      this.pending.set(seq, { resolve, reject, sent: performance.now() });
      this.port.postMessage({ type: "render", seq, widget, state });
    });
  }
}
