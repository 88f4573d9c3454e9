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
    // Each term is clickable in the formula itself and has a button beside it (the keyboard's way in).
    this.buttons = new Map([...figure.querySelectorAll("[data-term-button]")].map((b) => [b.dataset.termButton, b]));
    for (const node of figure.querySelectorAll("[data-term]")) {
      node.addEventListener("click", () => this.toggle(node.dataset.term));
    }
    for (const [key, button] of this.buttons) {
      button.addEventListener("click", () => this.toggle(key));
      button.addEventListener("keydown", (event) => {
        if (event.key === "Escape") this.close();
      });
    }
  }

  widget() {
    return this.widgetId ? this.widgetsById.get(this.widgetId) : undefined;
  }

  toggle(key) {
    if (this.active === key) this.close();
    else this.open(key);
  }

  nodes(key) {
    return this.figure.querySelectorAll(`[data-term="${key}"]`);
  }

  open(key) {
    this.close();
    this.active = key;
    for (const node of this.nodes(key)) node.classList.add("active");
    this.buttons.get(key)?.setAttribute("aria-expanded", "true");
    this.show();
    const control = this.control();
    if (control) control.classList.add("term-highlight");
  }

  close() {
    if (!this.active) return;
    for (const node of this.nodes(this.active)) node.classList.remove("active");
    this.buttons.get(this.active)?.setAttribute("aria-expanded", "false");
    this.control()?.classList.remove("term-highlight");
    this.back?.remove();
    this.active = null;
    this.panel.hidden = true;
    this.panel.replaceChildren();
  }

  control() {
    const term = this.active && this.terms[this.active];
    const widget = this.widget();
    if (!term?.control || !widget) return null;
    return widget.section.querySelector(`[data-param="${term.control}"]`);
  }

  // Fill the panel for the active term from the linked widget's newest view.
  show() {
    if (!this.active) return;
    const term = this.terms[this.active];
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
      go.addEventListener("click", () => this.jumpTo(control));
      line.append(go);
      parts.push(line);
    }
    this.panel.replaceChildren(...parts);
    this.panel.hidden = false;
  }

  // To the control that changes the active term, leaving a way back beside it: the formula may be thousands of
  // pixels above, and the reader was reading there.
  jumpTo(control) {
    const button = this.buttons.get(this.active);
    this.back?.remove();
    const back = element("button", "term-back", this.words.back);
    back.type = "button";
    back.addEventListener("click", () => {
      back.remove();
      button.scrollIntoView({ block: "center" });
      button.focus();
    });
    control.append(back);
    this.back = back;
    control.scrollIntoView({ block: "center" });
    control.querySelector("input:not([type=range]), select, input")?.focus();
  }

  viewChanged(widgetId) {
    if (widgetId === this.widgetId) this.show();
  }
}
