// Frames whose content is wider than they are (builder/scroll.py): while the content overflows, the frame is a
// focusable region named by its data-label (so a keyboard can scroll it), and data-more on the outer frame says
// which sides have more to see (site.css fades those edges). Where it fits, it is plain content.

// What a frame's state should be, read from layout; kept apart from writing it, so that a batch of frames costs
// one layout, not one for each frame written before the next is read.
function measure(box) {
  const overflowing = box.scrollWidth > box.clientWidth + 1;
  const more = [];
  if (overflowing && box.scrollLeft > 1) more.push("left");
  if (overflowing && box.scrollLeft + box.clientWidth < box.scrollWidth - 1) more.push("right");
  return { box, overflowing, more: more.join(" ") };
}

function apply({ box, overflowing, more }) {
  const frame = box.parentElement;
  if (overflowing && !box.hasAttribute("tabindex")) {
    box.tabIndex = 0;
    box.setAttribute("role", "region");
    box.setAttribute("aria-label", box.dataset.label);
  } else if (!overflowing && box.hasAttribute("tabindex")) {
    box.removeAttribute("tabindex");
    box.removeAttribute("role");
    box.removeAttribute("aria-label");
  }
  if ((frame.dataset.more ?? "") !== more) frame.dataset.more = more;
}

// The first state of each frame comes with the ResizeObserver's first report, made once the page is laid out
// anyway: reading the frames' widths as the page script starts would force a layout of the whole long lesson
// (about 0.2 s on a slow machine) before its first paint.
export function watchScrolling() {
  const resized = new ResizeObserver((entries) => {
    const boxes = new Set(entries.map((entry) => entry.target.closest("[data-scroll]") ?? entry.target));
    for (const state of [...boxes].map(measure)) apply(state);
  });
  for (const box of document.querySelectorAll("[data-scroll]")) {
    resized.observe(box);
    // A new view may widen the content (a longer label, a bigger diagram) without resizing the frame.
    if (box.firstElementChild) resized.observe(box.firstElementChild);
    box.addEventListener("scroll", () => apply(measure(box)), { passive: true });
  }
}

// A lesson's parts are laid out only near the screen (site.css, .lesson-part), and a frame in a part not laid out
// has no width to measure: it becomes a tab stop once its part is drawn. A keyboard user walks the whole page, so
// their first Tab has every part laid out, and each frame that overflows is a tab stop in its place before they
// reach it (the frames are measured in the next frame, far below the focus).
export function layOutAllForKeyboard() {
  const all = (event) => {
    if (event.key !== "Tab") return;
    document.documentElement.dataset.parts = "all";
    document.removeEventListener("keydown", all);
  };
  document.addEventListener("keydown", all);
}
