// Scenario links: ?ID.PARAM=value for every parameter that differs from the lesson's setting.
// Values from the URL are handed to Python as text; Python decides what is valid.

export function readUrlState(id, names) {
  const params = new URLSearchParams(window.location.search);
  const state = {};
  for (const name of names) {
    const value = params.get(`${id}.${name}`);
    if (value !== null) state[name] = value;
  }
  return state;
}

export function writeUrlState(widgets) {
  const params = new URLSearchParams(window.location.search);
  for (const widget of widgets) {
    for (const name of widget.paramNames) {
      const key = `${widget.id}.${name}`;
      if (String(widget.state[name]) === String(widget.initial[name])) params.delete(key);
      else params.set(key, String(widget.state[name]));
    }
  }
  const query = params.toString();
  const url = `${window.location.pathname}${query ? `?${query}` : ""}${window.location.hash}`;
  if (url !== `${window.location.pathname}${window.location.search}${window.location.hash}`) {
    window.history.replaceState(window.history.state, "", url);
  }
}
