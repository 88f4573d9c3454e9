// Scenario links in the prose ([text](?ID.PARAM=VALUE#ID), rendered as a[data-scenario]): a number the lesson
// quotes from one scenario of a widget opens that scenario in the widget. The link is the page's own URL state,
// so without this script (or opened in a new tab) it loads the page in that scenario; here it is followed in
// place, without a reload: each widget it names takes the lesson's setting with the link's values on top.
export function followScenarioLinks(widgetsById) {
  document.addEventListener("click", (event) => {
    const link = event.target.closest?.("a[data-scenario]");
    if (!link || event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return; // a new tab or window
    const url = new URL(link.href);
    const target = widgetsById.get(decodeURIComponent(url.hash.slice(1)));
    if (!target) return;
    event.preventDefault();
    const settings = new Map();
    for (const [key, value] of url.searchParams) {
      const dot = key.indexOf(".");
      const widget = widgetsById.get(key.slice(0, dot));
      if (dot < 0 || !widget) continue;
      settings.set(widget, { ...settings.get(widget), [key.slice(dot + 1)]: value });
    }
    for (const [widget, values] of settings) widget.openScenario(values);
    window.history.replaceState(window.history.state, "", `${window.location.pathname}${window.location.search}${url.hash}`);
    target.section.tabIndex = -1; // focus moves with the reader, as a followed link's target would take it
    target.section.scrollIntoView({ block: "start" });
    target.section.focus({ preventScroll: true });
  });
}
