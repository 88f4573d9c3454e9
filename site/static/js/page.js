// The one client script: finds every [data-widget] section, draws its pre-rendered view, and
// connects it to a single Python worker. It does no simulator maths.
import { Runtime } from "./runtime.js";
import { Widget } from "./widget.js";
import { writeUrlState } from "./urlstate.js";

function main() {
  const sections = [...document.querySelectorAll("[data-widget]")];
  if (sections.length === 0) return;
  const root = new URL(document.body.dataset.root || "./", document.baseURI);
  const simZip = new URL(document.body.dataset.simZip, root).href;
  const names = [...new Set(sections.map((section) => section.dataset.widget))];
  const runtime = new Runtime(simZip, names);
  const views = {};
  const widgets = [];
  // The URL follows the controls, but not on every slider step: browsers throttle history updates.
  let urlTimer = null;
  const page = {
    viewApplied(widget, view) {
      views[widget.id] = view;
      clearTimeout(urlTimer);
      urlTimer = setTimeout(() => writeUrlState(widgets), 150);
    },
  };
  runtime.start();
  // plotly.js is a deferred script after this module, so it runs after this and before DOMContentLoaded.
  document.addEventListener("DOMContentLoaded", () => {
    for (const section of sections) widgets.push(new Widget(section, runtime, page));
  }, { once: true });
  // For tests and the curious: the newest view each widget received from Python.
  window.inferlab = { runtime, views, widgets };
}

main();
