// Form controls of a widget: read their state, show a state, and map log-scaled sliders.
// A slider's position is a UI detail; the number box beside it holds the exact value.

const SLIDER_STEPS = 1000; // sim/widgets/controls.py renders initial positions with the same number

function rangeSpec(control) {
  return {
    min: Number(control.dataset.min),
    max: Number(control.dataset.max),
    log: control.dataset.log === "true",
  };
}

export function sliderPosition(value, { min, max, log }) {
  const v = Math.min(Math.max(value, min), max);
  const t = log ? Math.log(v / min) / Math.log(max / min) : (v - min) / (max - min);
  return Math.round(t * SLIDER_STEPS);
}

export function sliderValue(position, { min, max, log }) {
  const t = position / SLIDER_STEPS;
  const v = log ? min * Math.pow(max / min, t) : min + t * (max - min);
  return Math.min(Math.max(Math.round(v), min), max);
}

// Keyboard steps on a log slider: one unit at small values, about 5% at large ones; PageUp/Down double/halve.
function keyboardValue(key, value, { min, max }) {
  const up = Math.max(value + 1, Math.round(value * 1.05));
  const down = Math.min(value - 1, Math.round(value / 1.05));
  const next = {
    ArrowUp: up, ArrowRight: up, ArrowDown: down, ArrowLeft: down,
    PageUp: value * 2, PageDown: Math.floor(value / 2), Home: min, End: max,
  }[key];
  return next === undefined ? null : Math.min(Math.max(next, min), max);
}

export class Controls {
  constructor(section, onChange) {
    this.section = section;
    this.onChange = onChange; // (state fragment, source element) -> void
    this.ranges = [...section.querySelectorAll(".control-range")];
    this.selects = [...section.querySelectorAll(".control-select select")];
    this.radios = [...section.querySelectorAll('.control-choice input[type="radio"]')];
    this.numbers = [...section.querySelectorAll('.control-number input[type="number"]')];
    for (const control of this.ranges) this.bindRange(control);
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

  bindRange(control) {
    const spec = rangeSpec(control);
    const slider = control.querySelector('input[type="range"]');
    const box = control.querySelector('input[type="number"]');
    slider.addEventListener("input", () => {
      box.value = String(sliderValue(Number(slider.value), spec));
      this.onChange({ [box.name]: Number(box.value) }, slider);
    });
    slider.addEventListener("keydown", (event) => {
      if (!spec.log) return;
      const next = keyboardValue(event.key, Number(box.value), spec);
      if (next === null) return;
      event.preventDefault();
      box.value = String(next);
      slider.value = String(sliderPosition(next, spec));
      this.onChange({ [box.name]: next }, slider);
    });
    const fromBox = () => {
      if (box.value.trim() === "") return;
      slider.value = String(sliderPosition(Number(box.value), spec));
      this.onChange({ [box.name]: box.value }, box);
    };
    box.addEventListener("input", fromBox);
    box.addEventListener("change", fromBox);
  }

  setEnabled(enabled) {
    for (const element of this.section.querySelectorAll(".controls input, .controls select, .controls button, .control-choice input")) {
      element.disabled = !enabled;
    }
  }

  // Show a state; the element the user is typing into keeps what they typed.
  show(state, except = null) {
    for (const control of this.ranges) {
      const box = control.querySelector('input[type="number"]');
      if (!(box.name in state) || box === except) continue;
      box.value = String(state[box.name]);
      control.querySelector('input[type="range"]').value = String(sliderPosition(Number(state[box.name]), rangeSpec(control)));
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
