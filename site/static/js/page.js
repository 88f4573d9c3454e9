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
  const page = {
    viewApplied(widget, view) {
      views[widget.id] = view;
      writeUrlState(widgets);
    },
  };
  for (const section of sections) widgets.push(new Widget(section, runtime, page));
  // For tests and the curious: the newest view each widget received from Python.
  window.inferlab = { runtime, views, widgets };
  runtime.start();
}

main();
