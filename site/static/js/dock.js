// A widget's readouts at hand while its controls are in use, on a phone. A widget there is one to four screens
// tall: its controls come first and its readouts below them, so a student moving a slider would not see what it
// changed. While a control of the widget has focus or is touched, and some readout the last move changed is out
// of sight, a strip at the bottom of the screen shows those readouts (label and value, as the readouts show them).
//
// One rule for every widget, from what the page already holds: the strip's entries are the widget's
// [data-announce] readouts, the ones its announcer reads out after a move; which of them a move changed is
// read from the outputs the view rewrote (widget.js apply), never computed. The strip is a copy for the eye only
// (aria-hidden, no focusable part, no pointer events): assistive technology hears the announcer, as before.
// It is sticky within its widget, so it never covers the prose, and it leaves the focused control in sight.
// Wider screens never show it (widgets.css), and a widget whose readouts are in sight does not either.

// Before the first move of a control there is no telling what it moves: the widget's first readouts stand in.
const FIRST = 4;
const MARGIN_PX = 8;

// The element's box lies whole between `top` and `bottom` (viewport px).
function within(element, top, bottom) {
  const box = element.getBoundingClientRect();
  return box.height > 0 && box.top >= top - 1 && box.bottom <= bottom + 1;
}

export class ReadoutDock {
  constructor(section) {
    this.section = section;
    this.readouts = [...section.querySelectorAll("[data-announce]")];
    this.shown = []; // the readouts the strip lists, in the widget's order
    this.movedBy = new Map(); // control name -> the readouts its latest move changed
    this.active = null; // the control in use, while one is
    this.pressed = false; // a finger or button is down on it
    if (!section.querySelector(".controls [data-param]") || this.readouts.length === 0) return;

    const anchor = document.createElement("div");
    anchor.className = "readout-dock-anchor";
    this.strip = document.createElement("div");
    this.strip.className = "readout-dock";
    this.strip.setAttribute("aria-hidden", "true");
    this.strip.hidden = true;
    anchor.append(this.strip);
    section.querySelector("script.widget-data").before(anchor);

    this.check = () => {
      cancelAnimationFrame(this.frame);
      this.frame = requestAnimationFrame(() => this.place());
    };
    section.addEventListener("focusin", (event) => this.use(event.target));
    section.addEventListener("pointerdown", (event) => {
      this.pressed = true;
      this.use(event.target);
    });
    // Focus leaving the controls ends the use; so does a touch elsewhere (a touched slider may not take focus).
    section.addEventListener("focusout", (event) => {
      if (!this.controlOf(event.relatedTarget)) this.stop();
    });
    document.addEventListener("pointerdown", (event) => {
      if (this.active && !this.controlOf(event.target)) this.stop();
    });
    // The page never scrolls under a finger or button held down: a tap would land elsewhere than it began.
    const released = () => {
      if (!this.pressed) return;
      this.pressed = false;
      setTimeout(() => this.place({ reveal: true }), 0);
    };
    document.addEventListener("pointerup", released);
    document.addEventListener("pointercancel", released);
  }

  // The control (a .controls [data-param]) of this widget that `target` is part of, if any.
  controlOf(target) {
    const control = target?.closest?.(".controls [data-param]");
    return control && this.section.contains(control) ? control : null;
  }

  use(target) {
    const control = this.controlOf(target);
    if (!control) {
      if (this.active) this.stop();
      return;
    }
    const starting = this.active === null;
    this.active = control;
    const moved = this.movedBy.get(control.dataset.param);
    if (moved) this.shown = moved;
    else if (this.shown.length === 0) this.shown = this.readouts.slice(0, FIRST);
    if (starting) {
      addEventListener("scroll", this.check, { passive: true });
      addEventListener("resize", this.check);
    }
    this.fill();
    this.place();
    // once the browser has scrolled the newly focused control into view
    requestAnimationFrame(() => this.place({ reveal: true }));
  }

  stop() {
    this.active = null;
    removeEventListener("scroll", this.check);
    removeEventListener("resize", this.check);
    cancelAnimationFrame(this.frame);
    if (this.strip) this.strip.hidden = true;
  }

  // A view was applied; `changed` holds the outputs it rewrote and `source` the element moved (null when no
  // student moved anything: a scenario, a restored answer).
  viewApplied(changed, source) {
    if (!this.strip) return;
    const moved = this.readouts.filter((readout) =>
      [...readout.querySelectorAll("output")].some((output) => changed.has(output)));
    const control = this.controlOf(source);
    if (control && moved.length > 0) {
      this.movedBy.set(control.dataset.param, moved);
      if (control === this.active) this.shown = moved;
    }
    if (this.active === null) return;
    this.fill();
    this.place({ reveal: true });
  }

  // The strip's entries, each its readout's label and outputs as they stand now.
  fill() {
    const entries = this.shown.filter((readout) => !readout.closest("[hidden]")).map((readout) => {
      const entry = document.createElement("div");
      entry.className = "readout-dock-entry";
      const outputs = [...readout.querySelectorAll("output")];
      entry.dataset.for = outputs.map((output) => output.name).join(" ");
      const label = readout.querySelector(".readout-label");
      if (label) {
        const name = document.createElement("span");
        name.className = "readout-dock-label";
        name.textContent = label.textContent.trim();
        entry.append(name);
      }
      for (const [i, output] of (outputs.length > 0 ? outputs : [readout]).entries()) {
        const value = document.createElement("span");
        value.className = i === 0 ? "readout-dock-value" : "readout-dock-note";
        value.textContent = output.textContent.trim();
        entry.append(value);
      }
      return entry;
    });
    this.strip.replaceChildren(...entries);
  }

  // Shown while a listed readout is out of sight and the control in use is in sight (the student scrolled away
  // from the controls: the strip goes). `reveal`: if the strip covers the control in use, the page scrolls it up
  // above the strip; asked for when the control is taken up, moved or let go, never while the student scrolls.
  place({ reveal = false } = {}) {
    if (!this.active || !this.strip) return;
    const header = document.querySelector(".site-header");
    const top = header ? Math.max(0, header.getBoundingClientRect().bottom) : 0;
    const covered = this.strip.hidden ? 0 : this.strip.getBoundingClientRect().height;
    const visible = this.shown.filter((readout) => !readout.closest("[hidden]"));
    const away = visible.length === 0 || visible.every((readout) => within(readout, top, innerHeight - covered));
    const lost = this.active.getBoundingClientRect();
    const gone = lost.bottom < top || lost.top > innerHeight;
    this.strip.hidden = away || gone;
    // Narrow screens only (widgets.css): elsewhere the strip is never displayed.
    if (this.strip.hidden || !(this.strip.checkVisibility?.() ?? true) || !reveal || this.pressed) return;
    const stripTop = this.strip.getBoundingClientRect().top;
    const control = this.active.getBoundingClientRect();
    const overlap = control.bottom + MARGIN_PX - stripTop;
    // Scrolled up only as far as the control's top stays below the header.
    const room = control.top - top - MARGIN_PX;
    if (overlap > 0 && room > 0) scrollBy({ top: Math.min(overlap, room), behavior: "instant" });
  }
}
