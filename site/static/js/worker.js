// The Python side of the page, in a module Web Worker: boots Pyodide from the site's own
// vendor/ folder, unpacks the simulator zip, imports the page's widgets and answers {widget, state}
// with render(state). The view crosses as JSON text, so the page gets exactly what CPython's
// json.dumps would give.
//
// Boot starts at "init", sent from the page's <head>; the widget names follow in "widgets" once the
// page is parsed. "ready" is posted when both are done.
import { loadPyodide } from "../../vendor/pyodide/pyodide.mjs";

const SIM_DIR = "/home/pyodide/inferlab";
const timings = {}; // reported with "ready", for bench/
let simWidgets = null; // the sim.widgets module, once Pyodide is up
let widgetNames = null;
let renderJson = null;
let failed = false;

function post(message) {
  self.postMessage(message);
}

function fail(error) {
  failed = true;
  post({ type: "failed", message: String(error?.message ?? error) });
}

async function boot({ simZip }) {
  timings.start = performance.now();
  try {
    post({ type: "progress", stage: "python" });
    const simArchive = fetch(simZip).then((response) => {
      if (!response.ok) throw new Error(`${simZip}: HTTP ${response.status}`);
      return response.arrayBuffer();
    });
    simArchive.catch(() => {}); // awaited below; this only keeps an early failure from being "unhandled"
    const pyodide = await loadPyodide({
      indexURL: new URL("../../vendor/pyodide/", import.meta.url).href,
      stdout: () => {},
      stderr: (text) => console.warn(text),
    });
    timings.pyodide = performance.now();
    post({ type: "progress", stage: "simulator" });
    pyodide.unpackArchive(await simArchive, "zip", { extractDir: SIM_DIR });
    pyodide.runPython(`import sys\nif ${JSON.stringify(SIM_DIR)} not in sys.path: sys.path.insert(0, ${JSON.stringify(SIM_DIR)})`);
    simWidgets = pyodide.pyimport("sim.widgets");
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
  }
}

function render({ seq, widget, state }) {
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
