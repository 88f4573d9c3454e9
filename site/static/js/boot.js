// Loaded as an async module from the page's <head>: starts the Python worker while the browser is
// still laying out the page, so that Pyodide's boot (seconds) overlaps the page's own start-up.
import { Runtime } from "./runtime.js";

const html = document.documentElement;
const root = new URL(html.dataset.root || "./", document.baseURI);

export const runtime = new Runtime(new URL(html.dataset.simZip || "", root).href);
if (html.dataset.simZip) runtime.start(); // pages without widgets (a formula alone) need no Python
