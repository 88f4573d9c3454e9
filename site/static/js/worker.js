// The Python side of the page, in a module worker: starts Pyodide from the site's own vendor/ folder, unpacks the
// simulator zip, imports each page's widgets and answers {widget, state} with render(state). The view crosses as
// JSON text, so the page gets exactly what CPython's json.dumps would give.
//
// Where the browser has them, this is a SharedWorker (extendedLifetime): one Python for every tab of the site,
// kept alive across the step from one lesson to the next, so that the next page's widgets answer as soon as the
// page has asked for them (a few hundred milliseconds, against about a second for a restore). Elsewhere it is one
// dedicated worker per page. Each page is a client: its own port, its own widgets, its own "ready".
//
// Boot starts as soon as this module runs. The page names the sim zip and the standard library cut for it
// (builder/stdlib.py) in the worker's name ({type: "module", name: JSON {simZip, stdlibZip}}) rather than in a
// message: a message posted before the worker exists waits for the page's main thread, which is busy laying the
// page out. (Nor in its address: a service worker answering from its cache gives the worker the cached file's
// address, without the query.) The name also keeps builds apart: a new sim zip or standard library is a new
// shared worker. A page's widget names follow in "widgets" once it is parsed; "ready" is posted to it when both
// Python and its widgets are in.
//
// Python comes from a memory snapshot when this browser has one for this Pyodide build, sim zip and standard
// library (snapshot.js); otherwise it boots in full, and once it has answered, every widget module is imported and
// a snapshot saved for the next visit. "settled" says that is over.
//
// A page with slow widgets (sim/kit Widget.slow) starts a second shared worker for their renders once this one has
// settled and one of them nears the screen (page.js): its name adds {role: "slow"}. It restores from the snapshot this one saved (or boots in full where none
// was saved) and never saves one itself, so that two workers never write the same file.
import { loadPyodide, version as pyodideVersion } from "../../vendor/pyodide/pyodide.mjs";
import { findSnapshot, forgetSnapshot, saveSnapshot } from "./snapshot.js";

const SIM_DIR = "/home/pyodide/inferlab";
const INDEX_URL = new URL("../../vendor/pyodide/", import.meta.url).href;
const SHARED = typeof SharedWorkerGlobalScope !== "undefined" && self instanceof SharedWorkerGlobalScope;
const timings = {}; // the boot's, reported with each "ready" (for bench/ and the tests)
let pyodide = null;
let simWidgets = null; // the sim.widgets module, once Python is up
let renderJson = null; // set once Python is up and the simulator imported: the boot is over
let snapshotKey = null; // set when this boot should save a snapshot once the page is served
let unpackAfterReady = null; // a restored boot's sim zip, unpacked once "ready" is out (see unpackSimulator)
const IDLE_MS = 500; // the pause in renders after which the snapshot is made
let idleTimer = null;
let saving = false;
let failure = null; // the boot's failure, told to every page
let settled = null; // the after-boot work's outcome, once it is over
const clients = new Set(); // {port, names, ready, timings}: one per page
let pagesServed = 0;

function broadcast(message) {
  for (const client of clients) client.port.postMessage(message);
}

// A boot that fails is over for every page. A shared worker closes once a page has heard it, so that a retry (a
// new SharedWorker of the same name) starts a fresh one rather than finding this one. (A failure can come before
// the first page has connected: a refused download is quicker than the browser's "connect".)
function fail(error) {
  if (failure || renderJson) return;
  failure = String(error?.message ?? error);
  broadcast({ type: "failed", message: failure });
  closeIfFailed();
}

function closeIfFailed() {
  if (SHARED && failure && clients.size > 0) self.close();
}

// Pyodide leaves some failures unhandled — a refused pyodide.asm.wasm surfaces only as an uncaught "Failed to
// fetch", and loadPyodide never settles — so any uncaught error before "ready" is the boot's failure.
self.addEventListener("unhandledrejection", (event) => {
  event.preventDefault();
  if (renderJson) console.warn(`inferlab worker: ${event.reason?.message ?? event.reason}`);
  else fail(event.reason);
});
self.addEventListener("error", (event) => {
  event.preventDefault();
  if (!renderJson) fail(event.error ?? event.message);
});

// Pyodide's runtime script (1.25 MB), loaded from the start of the boot, not once loadPyodide has reached it:
// Pyodide's documented createPyodideModule option takes its factory, here one that waits for the import, so that
// loadPyodide starts its own downloads (the standard library) without waiting for it either.
let runtimeScript = null;
let stdLibURL = null; // the standard library cut for this sim zip, in place of Pyodide's own (2.5 MB)

function options(extra) {
  const createPyodideModule = async (settings) => (await runtimeScript).default(settings);
  return { indexURL: INDEX_URL, stdLibURL, createPyodideModule, stdout: () => {}, stderr: (text) => console.warn(text),
           ...extra };
}

// pyodide.asm.wasm, compiled from the moment the worker starts. Pyodide would start the compile only once its
// script and the snapshot are in (its loadPyodide awaits them first); streaming the 9.6 MB through the browser's
// wasm code cache takes a good part of a restore, and now overlaps them. Pyodide's own request for the file is
// answered with this module (its body left unread); any other instantiation goes through untouched.
function compileRuntimeEarly() {
  const url = `${INDEX_URL}pyodide.asm.wasm`;
  const compiled = WebAssembly.compileStreaming(fetch(url));
  compiled.catch(fail);
  const instantiateStreaming = WebAssembly.instantiateStreaming;
  WebAssembly.instantiateStreaming = async (source, imports) => {
    const response = await source;
    if (response.url !== url) return instantiateStreaming(source, imports);
    response.body?.cancel().catch(() => {});
    const module = await compiled;
    return { module, instance: await WebAssembly.instantiate(module, imports) };
  };
  return compiled;
}

// The simulator's files and import path. After a restore the modules are still imported, but the in-memory file
// system starts empty, so the zip is unpacked on every boot: before the imports on a full boot, and just after
// "ready" on a restore (every sim module is in the snapshot; only files they read later, such as presets, need
// the zip, and the worker unpacks it before it takes any render). The random generator is reseeded (from the
// browser's crypto), as the snapshot holds the state of the boot that made it. str hashes keep that boot's seed:
// every interned string and dict in the snapshot depends on it. Each browser's snapshot draws its own, and the
// simulator never depends on it.
//
// The import system's finders for the simulator's folders forget what they listed there. (Not
// importlib.invalidate_caches(): it does the same for every finder, and imports importlib.metadata and email to do
// it, 15 KB more of the standard library for every student to download.)
const FORGET_LISTINGS = `
import sys
for _path, _finder in list(sys.path_importer_cache.items()):
    if _path.startswith(${JSON.stringify(SIM_DIR)}) and _finder is not None:
        _finder.invalidate_caches()
`;

function unpackSimulator(archive) {
  pyodide.unpackArchive(archive, "zip", { extractDir: SIM_DIR });
  pyodide.runPython(FORGET_LISTINGS);
}

function preparePython() {
  pyodide.runPython(`
import sys
if ${JSON.stringify(SIM_DIR)} not in sys.path:
    sys.path.insert(0, ${JSON.stringify(SIM_DIR)})
import random
random.seed()
`);
  // For the tests: a restore must not replay the draws of the boot that made the snapshot.
  timings.random = pyodide.runPython("random.random()");
  simWidgets = pyodide.pyimport("sim.widgets");
}

async function boot({ simZip, stdlibZip, role = "main" }) {
  timings.origin = performance.timeOrigin; // the worker's clock starts here: bench/ lines it up with the page's
  const fileName = (url) => new URL(url).pathname.split("/").pop(); // content-hashed: a new file, a new name
  const key = `pyodide ${pyodideVersion} ${fileName(simZip)} ${fileName(stdlibZip)}`;
  stdLibURL = stdlibZip;
  // In the order they are needed: the snapshot's few requests are answered before the compile keeps this thread
  // busy, and the runtime script arrives before the wasm it instantiates.
  const finding = findSnapshot(key);
  runtimeScript = import("../../vendor/pyodide/pyodide.asm.mjs");
  runtimeScript.catch(fail);
  // The simulator is needed once Python is up, and the wasm long before: on a slow link, fetched alongside, its
  // 0.2 MB would delay the 3.5 MB the boot waits for.
  const simArchive = compileRuntimeEarly().then(() => fetch(simZip)).then((response) => {
    if (!response.ok) throw new Error(`${simZip}: HTTP ${response.status}`);
    return response.arrayBuffer();
  });
  simArchive.catch(() => {}); // awaited below; this only keeps an early failure from being "unhandled"
  try {
    const saved = await finding;
    if (saved) {
      try {
        pyodide = await loadPyodide(options({ _loadSnapshot: saved.bytes }));
        if (!(await saved.verified)) throw new Error("the snapshot is damaged");
        timings.pyodide = performance.now();
        preparePython();
        unpackAfterReady = await simArchive;
        timings.restored = true;
      } catch (error) {
        // A snapshot this build cannot use: forget it, boot in full below and save a good one.
        console.warn(`inferlab: Python snapshot not restored (${error?.message ?? error}); starting afresh`);
        pyodide = null;
        await forgetSnapshot();
      }
    }
    if (!pyodide) {
      const saves = role === "main";
      pyodide = await loadPyodide(options(saves ? { _makeSnapshot: true } : {}));
      timings.pyodide = performance.now();
      broadcast({ type: "progress", stage: "simulator" });
      unpackSimulator(await simArchive);
      preparePython();
      timings.restored = false;
      snapshotKey = saves ? key : null;
    }
    finishBoot();
  } catch (error) {
    fail(error);
  }
}

// Python is up: serve every page that has named its widgets, then the after-boot work.
function finishBoot() {
  renderJson = simWidgets.render_json;
  for (const client of clients) serve(client);
  if (unpackAfterReady) {
    try {
      unpackSimulator(unpackAfterReady);
    } catch (error) {
      console.warn(`inferlab worker: the simulator's files were not unpacked (${error?.message ?? error})`);
    }
    unpackAfterReady = null;
  }
  if (snapshotKey) saveWhenIdle();
  else settle(timings.restored ? "restored" : "none");
}

function settle(outcome) {
  settled = outcome;
  broadcast({ type: "settled", snapshot: outcome });
}

// Import a page's widgets once both Python and their names are here, and tell it Python is ready. A widget that
// cannot be imported fails that page only: Python goes on serving the others.
function serve(client) {
  if (failure) {
    client.port.postMessage({ type: "failed", message: failure });
    return;
  }
  if (!renderJson || !client.names || client.ready) return;
  try {
    for (const name of client.names) simWidgets.load(name);
  } catch (error) {
    client.port.postMessage({ type: "failed", message: String(error?.message ?? error) });
    return;
  }
  client.ready = true;
  client.port.postMessage({ type: "ready", timings: { ...timings, ...client.timings, ready: performance.now() } });
  if (settled) client.port.postMessage({ type: "settled", snapshot: settled });
}

// The snapshot (about 0.2 s of this thread's time) waits for a pause in the student's moves, so that it never
// delays an answer; every render pushes it back.
function saveWhenIdle() {
  if (saving || !snapshotKey) return;
  clearTimeout(idleTimer);
  idleTimer = setTimeout(() => {
    saving = true;
    saveForNextPage().then(settle);
  }, IDLE_MS);
}

// Every widget imported, then Python's memory kept for the next page of the course.
async function saveForNextPage() {
  try {
    for (const name of simWidgets.names()) simWidgets.load(name);
    const bytes = pyodide.makeMemorySnapshot();
    return (await saveSnapshot(snapshotKey, bytes)) ? "saved" : "refused";
  } catch (error) {
    console.warn(`inferlab: no Python snapshot (${error?.message ?? error})`);
    return "failed";
  }
}

// pythonMs: the render in Python and its JSON, for bench/'s split of a slider move.
function render(port, { seq, widget, state }) {
  saveWhenIdle();
  try {
    const started = performance.now();
    const json = renderJson(widget, JSON.stringify(state));
    port.postMessage({ type: "view", seq, json, pythonMs: performance.now() - started });
  } catch (error) {
    port.postMessage({ type: "error", seq, message: String(error?.message ?? error) });
  }
}

// A page: its port (the dedicated worker's own scope, or a port of the shared one) and its widgets.
function connect(port) {
  // shared: this page found Python running (or starting) for an earlier page; start: when this page came
  const client = { port, names: null, ready: false, timings: { start: performance.now(), shared: pagesServed++ > 0 } };
  clients.add(client);
  port.onmessage = (event) => {
    const message = event.data;
    if (message.type === "widgets") {
      client.names = message.names;
      serve(client);
    } else if (message.type === "render") render(port, message);
    else if (message.type === "bye") clients.delete(client);
  };
  if (failure) {
    serve(client);
    closeIfFailed();
  } else if (!renderJson) port.postMessage({ type: "progress", stage: "python" });
}

if (SHARED) self.onconnect = (event) => connect(event.ports[0]);
else connect(self);

let given = null;
try {
  given = JSON.parse(self.name);
} catch {
  // not started by this site's page
}
if (given?.simZip && given?.stdlibZip) boot(given);
else fail("the page did not name the simulator (new Worker(…, {name: JSON {simZip, stdlibZip}}))");
