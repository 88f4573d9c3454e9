// The language switch keeps the reader's place: when its link is followed, it carries the page's scenario
// (the widgets' URL state, ?ID.PARAM=…) and the section being read, if the other version has it too
// (the builder lists the shared sections in data-sections). Without JavaScript the link goes to the page's top.

// The section the reader is in: the last heading or widget that starts above the upper third of the screen.
function currentSection(ids) {
  let current = null;
  for (const id of ids) {
    const element = document.getElementById(id);
    if (element && element.getBoundingClientRect().top <= window.innerHeight / 3) {
      if (!current || current.compareDocumentPosition(element) & Node.DOCUMENT_POSITION_FOLLOWING) current = element;
    }
  }
  return current?.id ?? null;
}

export function keepPlaceOnSwitch() {
  for (const link of document.querySelectorAll("a[data-language-switch]")) {
    const base = link.getAttribute("href");
    const sections = (link.dataset.sections ?? "").split(" ").filter(Boolean);
    const update = () => {
      if (!sections.length) return; // the lesson is not written in that language: its home page
      const section = currentSection(sections);
      link.setAttribute("href", `${base}${window.location.search}${section ? `#${section}` : ""}`);
    };
    for (const event of ["pointerdown", "focus", "click", "mouseenter"]) link.addEventListener(event, update);
  }
}
