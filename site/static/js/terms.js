// Clickable formula terms: each \term in a `::: formula` block explains itself in the panel below the
// formula (name, unit, text from the glossary, lessons/<lang>/catalog.yml), shows its value now from the linked widget's
// latest view, and highlights the control that changes it. Only text is inserted, never HTML.
import { TEXT } from "./text.js";

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export class Formula {
  constructor(figure, widgetsById) {
    this.figure = figure;
    this.widgetsById = widgetsById;
    const data = JSON.parse(figure.querySelector("script.term-data").textContent);
    this.widgetId = data.widget;
    this.terms = data.terms;
    this.panel = figure.querySelector(".term-panel");
    this.words = TEXT.terms;
    this.active = null;
    for (const node of figure.querySelectorAll("[data-term]")) {
      node.setAttribute("aria-expanded", "false");
      node.addEventListener("click", () => this.toggle(node));
      node.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          this.toggle(node);
        } else if (event.key === "Escape") {
          this.close();
        }
      });
    }
  }

  widget() {
    return this.widgetId ? this.widgetsById.get(this.widgetId) : undefined;
  }

  toggle(node) {
    if (this.active === node) this.close();
    else this.open(node);
  }

  open(node) {
    this.close();
    this.active = node;
    node.classList.add("active");
    node.setAttribute("aria-expanded", "true");
    this.show();
    const control = this.control();
    if (control) control.classList.add("term-highlight");
  }

  close() {
    if (!this.active) return;
    this.active.classList.remove("active");
    this.active.setAttribute("aria-expanded", "false");
    this.control()?.classList.remove("term-highlight");
    this.active = null;
    this.panel.hidden = true;
    this.panel.replaceChildren();
  }

  control() {
    const term = this.active && this.terms[this.active.dataset.term];
    const widget = this.widget();
    if (!term?.control || !widget) return null;
    return widget.section.querySelector(`[data-param="${term.control}"]`);
  }

  // Fill the panel for the active term from the linked widget's newest view.
  show() {
    if (!this.active) return;
    const term = this.terms[this.active.dataset.term];
    const widget = this.widget();
    const title = element("p", "term-title");
    title.append(element("strong", "", term.name), document.createTextNode(` · ${term.unit}`));
    const parts = [title, element("p", "term-text", term.text)];
    const value = widget && term.output ? widget.view.outputs[term.output] : null;
    parts.push(element("p", "term-value", `${this.words.now}${value ? value.text : this.words.no_value}`));
    const control = this.control();
    if (control) {
      const label = control.querySelector("label, legend")?.textContent ?? term.control;
      const line = element("p", "term-control", `${this.words.changed_by}${label} `);
      const go = element("button", "term-go", this.words.go);
      go.type = "button";
      go.addEventListener("click", () => {
        control.scrollIntoView({ block: "center" });
        control.querySelector("input:not([type=range]), select, input")?.focus();
      });
      line.append(go);
      parts.push(line);
    }
    this.panel.replaceChildren(...parts);
    this.panel.hidden = false;
  }

  viewChanged(widgetId) {
    if (widgetId === this.widgetId) this.show();
  }
}
