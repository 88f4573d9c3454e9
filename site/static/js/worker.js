// The Python side of the page, in a module Web Worker: starts Pyodide from the site's own vendor/ folder,
// unpacks the simulator zip, imports the page's widgets and answers {widget, state} with render(state). The
// view crosses as JSON text, so the page gets exactly what CPython's json.dumps would give.
//
// Boot starts at "init", sent from the page's <head>; the widget names follow in "widgets" once the page is
// parsed. "ready" is posted when both are done. Python comes from a memory snapshot when this browser has one
// for this Pyodide build and this sim zip (snapshot.js); otherwise it boots in full, and once it has answered,
// every widget module is imported and a snapshot saved for the next page. "settled" says that is over.
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

function options(extra) {
  return { indexURL: INDEX_URL, stdout: () => {}, stderr: (text) => console.warn(text), ...extra };
}

// The simulator's files and import path. After a restore the modules are still imported, but the in-memory file
// system starts empty, so the zip is unpacked on every boot; the random generator is reseeded (from the browser's
// crypto), as the snapshot holds the state of the boot that made it. str hashes keep that boot's seed: every
// interned string and dict in the snapshot depends on it. Each browser's snapshot draws its own, and the simulator
// never depends on it.
function preparePython(archive) {
  pyodide.unpackArchive(archive, "zip", { extractDir: SIM_DIR });
  pyodide.runPython(`
import importlib, sys
if ${JSON.stringify(SIM_DIR)} not in sys.path:
    sys.path.insert(0, ${JSON.stringify(SIM_DIR)})
importlib.invalidate_caches()
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
  post({ type: "progress", stage: "python" });
  const simArchive = fetch(simZip).then((response) => {
    if (!response.ok) throw new Error(`${simZip}: HTTP ${response.status}`);
    return response.arrayBuffer();
  });
  simArchive.catch(() => {}); // awaited below; this only keeps an early failure from being "unhandled"
  const key = `pyodide ${pyodideVersion} ${new URL(simZip).pathname.split("/").pop()}`;
  try {
    const saved = await findSnapshot(key);
    if (saved) {
      try {
        pyodide = await loadPyodide(options({ _loadSnapshot: saved.bytes }));
        if (!(await saved.verified)) throw new Error("the snapshot is damaged");
        timings.pyodide = performance.now();
        preparePython(await simArchive);
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
      preparePython(await simArchive);
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
  if (message.type === "init") boot(message);
  else if (message.type === "widgets") {
    widgetNames = message.names;
    finishBoot();
  } else if (message.type === "render") render(message);
};
