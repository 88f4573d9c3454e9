// Frames whose content is wider than they are (builder/scroll.py): while the content overflows, the frame is a
// focusable region named by its data-label (so a keyboard can scroll it), and data-more on the outer frame says
// which sides have more to see (site.css fades those edges). Where it fits, it is plain content.
function update(box) {
  const frame = box.parentElement;
  const overflowing = box.scrollWidth > box.clientWidth + 1;
  if (overflowing && !box.hasAttribute("tabindex")) {
    box.tabIndex = 0;
    box.setAttribute("role", "region");
    box.setAttribute("aria-label", box.dataset.label);
  } else if (!overflowing && box.hasAttribute("tabindex")) {
    box.removeAttribute("tabindex");
    box.removeAttribute("role");
    box.removeAttribute("aria-label");
  }
  const more = [];
  if (overflowing && box.scrollLeft > 1) more.push("left");
  if (overflowing && box.scrollLeft + box.clientWidth < box.scrollWidth - 1) more.push("right");
  const value = more.join(" ");
  if ((frame.dataset.more ?? "") !== value) frame.dataset.more = value;
}

export function watchScrolling() {
  const boxes = document.querySelectorAll("[data-scroll]");
  const resized = new ResizeObserver((entries) => {
    for (const entry of entries) update(entry.target.closest("[data-scroll]") ?? entry.target);
  });
  for (const box of boxes) {
    resized.observe(box);
    // A new view may widen the content (a longer label, a bigger diagram) without resizing the frame.
    if (box.firstElementChild) resized.observe(box.firstElementChild);
    box.addEventListener("scroll", () => update(box), { passive: true });
    update(box);
  }
}
