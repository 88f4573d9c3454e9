// The page's theme, light or dark, on <html data-theme>. A classic script in <head>: it runs before the body is
// drawn, so a page never flashes in the wrong theme. The reader's choice from the toggle is kept in localStorage
// (every page, reloads, other tabs); without one, the system's setting is followed, live.
// A change is announced as a "themechange" event on document: the plots draw themselves again in its colours.
(() => {
  const KEY = "inferlab-theme";
  const html = document.documentElement;
  const system = matchMedia("(prefers-color-scheme: dark)");

  function chosen() {
    try {
      const theme = localStorage.getItem(KEY);
      return theme === "light" || theme === "dark" ? theme : null;
    } catch {
      return null; // storage blocked: follow the system
    }
  }

  function current() {
    return chosen() ?? (system.matches ? "dark" : "light");
  }

  function apply(theme) {
    for (const button of document.querySelectorAll("[data-theme-toggle]")) {
      button.setAttribute("aria-pressed", String(theme === "dark"));
    }
    if (html.dataset.theme === theme) return;
    html.dataset.theme = theme;
    document.dispatchEvent(new CustomEvent("themechange", { detail: { theme } }));
  }

  apply(current());
  system.addEventListener("change", () => apply(current()));
  // Paper is light whatever the screen's theme (site.css): the colours plots are drawn in change with it.
  matchMedia("print").addEventListener("change", () => {
    document.dispatchEvent(new CustomEvent("themechange", { detail: { theme: html.dataset.theme } }));
  });
  addEventListener("storage", (event) => {
    if (event.key === KEY) apply(current());
  });
  document.addEventListener("DOMContentLoaded", () => {
    for (const button of document.querySelectorAll("[data-theme-toggle]")) {
      button.hidden = false; // it needs this script, so it is hidden until the script runs
      button.addEventListener("click", () => {
        const theme = html.dataset.theme === "dark" ? "light" : "dark";
        try {
          localStorage.setItem(KEY, theme);
        } catch {
          // not kept across pages, but this page still changes
        }
        apply(theme);
      });
    }
    apply(current());
  });
})();
