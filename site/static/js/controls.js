// Form controls of a widget: read their state and show a state.
// A log-scaled slider's position is an index into its data-stops, the values Python rendered for it
// (sim/kit/controls.py); a linear slider's position is its value. The number box holds the exact value.
// A value typed into a box and committed (Enter, or leaving the box) that the control cannot take is replaced by
// the value Python used, and the note beside the box says why; while the student is still typing, the box keeps
// what they typed.

import { fill, TEXT } from "./text.js";

// The position that shows `value`: the last stop not above it, as the builder places the thumb.
function positionOf(stops, value) {
  let low = 0;
  let high = stops.length - 1;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (stops[middle] <= value) low = middle;
    else high = middle - 1;
  }
  return low;
}

class RangeControl {
  constructor(control) {
    this.slider = control.querySelector('input[type="range"]');
    this.box = control.querySelector('input[type="number"]');
    this.stops = this.slider.dataset.stops ? this.slider.dataset.stops.split(",").map(Number) : null;
    this.note = control.querySelector("[data-control-note]");
    this.typed = null; // the text of a committed value, until the view that used it has been shown
  }

  // Why the box shows `used` rather than what was typed: beyond an end of the range (the box's own min and max,
  // rendered by Python), or between the values the control takes. Only compares; Python decided the value.
  explain(used) {
    if (!this.note || this.typed === null) return;
    const typed = this.typed;
    this.typed = null;
    let words = "";
    if (Number(typed) !== used) {
      const values = { typed, used, min: this.box.min, max: this.box.max };
      if (Number(typed) > Number(this.box.max)) words = fill(TEXT.widget.above_max, values);
      else if (Number(typed) < Number(this.box.min)) words = fill(TEXT.widget.below_min, values);
      else words = fill(TEXT.widget.not_a_value, values);
    }
    if (this.note.textContent !== words) this.note.textContent = words;
  }

  valueAt(position) {
    return this.stops ? this.stops[position] : position;
  }

  show(value) {
    this.box.value = String(value);
    this.place(value);
  }

  place(value) {
    this.slider.value = String(this.stops ? positionOf(this.stops, value) : value);
    if (this.stops) this.slider.setAttribute("aria-valuetext", String(value));
  }
}

export class Controls {
  constructor(section, onChange) {
    this.section = section;
    this.onChange = onChange; // (state fragment, source element) -> void
    this.ranges = [...section.querySelectorAll(".control-range")].map((control) => new RangeControl(control));
    this.selects = [...section.querySelectorAll(".control-select select")];
    this.radios = [...section.querySelectorAll('.control-choice input[type="radio"]')];
    this.numbers = [...section.querySelectorAll('.control-number input[type="number"]')];
    for (const range of this.ranges) this.bindRange(range);
    for (const select of this.selects) {
      select.addEventListener("change", () => this.onChange({ [select.name]: select.value }, select));
    }
    for (const box of this.numbers) {
      // A free number is sent when it is committed (Enter, leaving the box, or its button), not per keystroke.
      const commit = () => this.onChange({ [box.name]: box.value.trim() === "" ? null : box.value }, box);
      box.addEventListener("change", commit);
      box.closest(".control-number").querySelector("button.commit")?.addEventListener("click", commit);
    }
    for (const radio of this.radios) {
      radio.addEventListener("change", () => {
        if (radio.checked) this.onChange({ [radio.dataset.name]: radio.value }, radio);
      });
    }
  }

  // The slider's keyboard is the browser's own: arrows move one stop, Home/End go to the ends.
  bindRange(range) {
    const { slider, box } = range;
    slider.addEventListener("input", () => {
      const value = range.valueAt(Number(slider.value));
      if (range.note) range.note.textContent = "";
      range.show(value);
      this.onChange({ [box.name]: value }, slider);
    });
    const fromBox = (committed) => {
      if (box.value.trim() === "") return;
      range.typed = committed ? box.value.trim() : null;
      if (!committed && range.note) range.note.textContent = "";
      range.place(Number(box.value));
      this.onChange({ [box.name]: box.value }, box);
    };
    box.addEventListener("input", () => fromBox(false));
    box.addEventListener("change", () => fromBox(true));
  }

  setEnabled(enabled) {
    for (const element of this.section.querySelectorAll(".controls input, .controls select, .controls button, .control-choice input")) {
      element.disabled = !enabled;
    }
  }

  // Show a state; the element the user is typing into keeps what they typed, unless they committed it.
  show(state, except = null) {
    for (const range of this.ranges) {
      if (!(range.box.name in state)) continue;
      const committed = range.typed !== null;
      if (range.box !== except || committed) range.show(state[range.box.name]);
      if (committed) range.explain(state[range.box.name]);
    }
    for (const box of this.numbers) {
      if (box.name in state && box !== except) box.value = state[box.name] === null ? "" : String(state[box.name]);
    }
    for (const radio of this.radios) {
      if (radio.dataset.name in state) radio.checked = String(state[radio.dataset.name]) === radio.value;
    }
    for (const select of this.selects) {
      if (select.name in state && select !== except && [...select.options].some((o) => o.value === String(state[select.name]))) {
        select.value = String(state[select.name]);
      }
    }
  }
}
