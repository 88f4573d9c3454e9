// The page script's words, in the page's language: the builder writes them into the page from the
// page chrome's catalog (site/i18n/<lang>.yml, `script`), so that no string lives here.
const island = document.querySelector("script.page-text");

export const TEXT = JSON.parse(island.textContent);

// A catalog string with its {placeholders} filled in.
export function fill(template, values) {
  return template.replace(/\{(\w+)\}/g, (_, key) => values[key]);
}
