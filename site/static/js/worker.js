// The Python side of the page, in a module Web Worker: boots Pyodide from the site's own
// vendor/ folder, unpacks the simulator zip, and answers {widget, state} with render(state).
// The view crosses as JSON text, so the page gets exactly what CPython's json.dumps would give.
import { loadPyodide } from "../../vendor/pyodide/pyodide.mjs";

const SIM_DIR = "/home/pyodide/inferlab";
let renderJson = null;

function post(message) {
  self.postMessage(message);
}

async function boot({ simZip, widgets }) {
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
    post({ type: "progress", stage: "simulator" });
    pyodide.unpackArchive(await simArchive, "zip", { extractDir: SIM_DIR });
    pyodide.runPython(`import sys\nif ${JSON.stringify(SIM_DIR)} not in sys.path: sys.path.insert(0, ${JSON.stringify(SIM_DIR)})`);
    const simWidgets = pyodide.pyimport("sim.widgets");
    for (const name of widgets) simWidgets.load(name);
    renderJson = simWidgets.render_json;
    post({ type: "ready" });
  } catch (error) {
    post({ type: "failed", message: String(error?.message ?? error) });
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
  else if (message.type === "render") render(message);
};
