// Plotly needs concrete colours, while the simulator's figures name the palette's CSS variables
// (var(--sim-…), sim/kit/palette.py). Each is resolved in the page's current theme, once per theme.
const resolved = new Map();
let probe = null;
document.addEventListener("themechange", () => resolved.clear());

function resolve(value) {
  let colour = resolved.get(value);
  if (colour === undefined) {
    probe ??= document.body.appendChild(Object.assign(document.createElement("span"), { hidden: true }));
    probe.style.color = value;
    colour = getComputedStyle(probe).color;
    resolved.set(value, colour);
  }
  return colour;
}

// A copy of a figure (or any part of one) with every palette variable replaced by its colour.
export function withColours(node) {
  if (typeof node === "string") return node.startsWith("var(--") ? resolve(node) : node;
  if (Array.isArray(node)) return node.map(withColours);
  if (node !== null && typeof node === "object") {
    const copy = {};
    for (const [key, value] of Object.entries(node)) copy[key] = withColours(value);
    return copy;
  }
  return node;
}
