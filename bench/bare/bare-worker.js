import { loadPyodide } from "../../vendor/pyodide/pyodide.mjs";

await loadPyodide({ indexURL: new URL("../../vendor/pyodide/", import.meta.url).href });
self.postMessage("ready");
