// The Python side of the page, in a module Web Worker: starts Pyodide from the site's own vendor/ folder,
// unpacks the simulator zip, imports the page's widgets and answers {widget, state} with render(state). The
// view crosses as JSON text, so the page gets exactly what CPython's json.dumps would give.
//
// Boot starts as soon as this module runs. The page names the sim zip in the worker's name ({type: "module",
// name: JSON {simZip}}) rather than in a message: a message posted before the worker exists waits for the page's
// main thread, which is busy laying the page out. (Nor in its address: a service worker answering from its cache
// gives the worker the cached file's address, without the query.) The widget names follow in "widgets" once the
// page is parsed; "ready" is posted when both are done.
//
// Python comes from a memory snapshot when this browser has one for this Pyodide build and this sim zip
// (snapshot.js); otherwise it boots in full, and once it has answered, every widget module is imported and a
// snapshot saved for the next page. "settled" says that is over.
import { loadPyodide, version as pyodideVersion } from "../../vendor/pyodide/pyodide.mjs";
import { findSnapshot, forgetSnapshot, saveSnapshot } from "./snapshot.js";

const SIM_DIR = "/home/pyodide/inferlab";
const INDEX_URL = new URL("../../vendor/pyodide/", import.meta.url).href;
const timings = {}; // reported with "ready", for bench/ and the tests
let pyodide = null;
let simWidgets = null; // the sim.widgets module, once Python is up
let widgetNames = null;
let renderJson = null;
let snapshotKey = null; // set when this boot should save a snapshot once the page is served
let unpackAfterReady = null; // a restored boot's sim zip, unpacked once "ready" is out (see unpackSimulator)
const IDLE_MS = 500; // the pause in renders after which the snapshot is made
let idleTimer = null;
let saving = false;
let failed = false;

function post(message) {
  self.postMessage(message);
}

function fail(error) {
  if (failed || renderJson) return;
  failed = true;
  post({ type: "failed", message: String(error?.message ?? error) });
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

function options(extra) {
  const createPyodideModule = async (settings) => (await runtimeScript).default(settings);
  return { indexURL: INDEX_URL, createPyodideModule, stdout: () => {}, stderr: (text) => console.warn(text), ...extra };
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
}

// The simulator's files and import path. After a restore the modules are still imported, but the in-memory file
// system starts empty, so the zip is unpacked on every boot: before the imports on a full boot, and just after
// "ready" on a restore (every sim module is in the snapshot; only files they read later, such as presets, need
// the zip, and the worker unpacks it before it takes any render). The random generator is reseeded (from the
// browser's crypto), as the snapshot holds the state of the boot that made it. str hashes keep that boot's seed:
// every interned string and dict in the snapshot depends on it. Each browser's snapshot draws its own, and the
// simulator never depends on it.
function unpackSimulator(archive) {
  pyodide.unpackArchive(archive, "zip", { extractDir: SIM_DIR });
  pyodide.runPython("import importlib; importlib.invalidate_caches()");
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

async function boot({ simZip }) {
  timings.start = performance.now();
  timings.origin = performance.timeOrigin; // the worker's clock starts here: bench/ lines it up with the page's
  const key = `pyodide ${pyodideVersion} ${new URL(simZip).pathname.split("/").pop()}`;
  // In the order they are needed: the snapshot's few requests are answered before the compile keeps this thread
  // busy, and the runtime script arrives before the wasm it instantiates.
  const finding = findSnapshot(key);
  runtimeScript = import("../../vendor/pyodide/pyodide.asm.mjs");
  runtimeScript.catch(fail);
  compileRuntimeEarly();
  post({ type: "progress", stage: "python" });
  const simArchive = fetch(simZip).then((response) => {
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
      pyodide = await loadPyodide(options({ _makeSnapshot: true }));
      timings.pyodide = performance.now();
      post({ type: "progress", stage: "simulator" });
      unpackSimulator(await simArchive);
      preparePython();
      timings.restored = false;
      snapshotKey = key;
    }
    finishBoot();
  } catch (error) {
    fail(error);
  }
}

// Import the page's widgets once both Python and their names are here.
function finishBoot() {
  if (failed || renderJson || !simWidgets || !widgetNames) return;
  try {
    for (const name of widgetNames) simWidgets.load(name);
    renderJson = simWidgets.render_json;
    timings.ready = performance.now();
    post({ type: "ready", timings });
  } catch (error) {
    fail(error);
    return;
  }
  if (unpackAfterReady) {
    try {
      unpackSimulator(unpackAfterReady);
    } catch (error) {
      console.warn(`inferlab worker: the simulator's files were not unpacked (${error?.message ?? error})`);
    }
    unpackAfterReady = null;
  }
  if (snapshotKey) saveWhenIdle();
  else post({ type: "settled", snapshot: "restored" });
}

// The snapshot (about 0.2 s of this thread's time) waits for a pause in the student's moves, so that it never
// delays an answer; every render pushes it back.
function saveWhenIdle() {
  if (saving || !snapshotKey) return;
  clearTimeout(idleTimer);
  idleTimer = setTimeout(() => {
    saving = true;
    saveForNextPage().then((state) => post({ type: "settled", snapshot: state }));
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

function render({ seq, widget, state }) {
  saveWhenIdle();
  try {
    post({ type: "view", seq, json: renderJson(widget, JSON.stringify(state)) });
  } catch (error) {
    post({ type: "error", seq, message: String(error?.message ?? error) });
  }
}

self.onmessage = (event) => {
  const message = event.data;
  if (message.type === "widgets") {
    widgetNames = message.names;
    finishBoot();
  } else if (message.type === "render") render(message);
};

let given = null;
try {
  given = JSON.parse(self.name);
} catch {
  // not started by this site's page
}
if (given?.simZip) boot(given);
else fail("the page did not name the simulator (new Worker(…, {name: JSON {simZip}}))");
