// Full-text search over the lessons, in the page's language. The index is Pagefind's, written by the build
// (builder/search.py) into <site>/pagefind/ with one index per <html lang>; pagefind.js reads the page's
// <html lang> and searches that one. It is loaded on first use, from the site's root as the page gives it
// (data-root), so the search works wherever the site is served from (a project site lives under /<repo>/).
// Every word shown comes from the search box's data-text-* attributes (site/i18n/<lang>.yml, `search`).

import { available, Unreachable } from "./offline.js";

const DEBOUNCE_MS = 150;
// Pagefind's extended indexer separates the words of a Chinese text with zero-width spaces; readers see none.
const WORD_SEPARATORS = /\u200b/g;

function siteRoot() {
  return new URL(document.documentElement.dataset.root || "./", document.baseURI);
}

async function loadPagefind() {
  const root = siteRoot();
  const script = new URL("pagefind/pagefind.js", root).href;
  // A student searching wants search offline too: the service worker keeps the whole index (and the rest kept on
  // use) once it has answered.
  if (!(await available(script, { keepTheRest: true }))) throw new Unreachable(script);
  const pagefind = await import(script);
  // Result URLs are the indexed pages' paths from the site root: put the root the page is served from in front.
  await pagefind.options({ baseUrl: root.pathname });
  await pagefind.init();
  return pagefind;
}

// Pagefind cuts a Chinese query into words as the browser does, which is not always as its index cut the pages
// (Pagefind #1237): a two-character word can be searched as its two characters, and then finds a page that holds
// them apart. Where the query holds Chinese, every result is read and kept only if its text holds each Chinese
// word of the query.
const CHINESE = /\p{Script=Han}/u;

// Pagefind indexes a hyphenated Latin word as one word without its hyphens (min-p as minp), and cuts an English
// query the same way; but a query on a Chinese page is cut by the browser's segmenter, into min, - and p, each of
// which matches the start of many words ("prefill"). Joined first, the query asks for the word the index holds.
const HYPHENATED = /(?<=[\p{Script=Latin}\d])-(?=[\p{Script=Latin}\d])/gu;
const asIndexed = (query) => query.replace(HYPHENATED, "");

// Every page found is listed, so that the count the status gives is the list a student can reach: the index holds
// only lessons (a few dozen at most), and each result's data is one small fragment.
async function holding(results, query) {
  if (!CHINESE.test(query)) {
    return { total: results.length, data: await Promise.all(results.map((r) => r.data())) };
  }
  const words = query.trim().split(/\s+/).filter((word) => CHINESE.test(word)); // Latin words match any case
  const pages = (await Promise.all(results.map((result) => result.data())))
    .filter((page) => words.every((word) => page.content.replace(WORD_SEPARATORS, "").includes(word)));
  return { total: pages.length, data: pages };
}

// An excerpt as DOM nodes: Pagefind marks the matched words with <mark>; everything else is kept as text only.
// DOMParser builds an inert document (nothing in it runs or loads); no markup of it reaches the page.
function excerptNodes(excerpt) {
  const parsed = new DOMParser().parseFromString(excerpt, "text/html").body;
  const pieces = [];
  for (const node of parsed.childNodes) {
    const text = (node.textContent ?? "").replace(WORD_SEPARATORS, "");
    const marked = node.nodeName === "MARK";
    if (!text) continue;
    const last = pieces.at(-1);
    if (last && last.marked === marked) last.text += text;
    else pieces.push({ text, marked });
  }
  return pieces.map(({ text, marked }) => {
    if (!marked) return document.createTextNode(text);
    const mark = document.createElement("mark");
    mark.textContent = text;
    return mark;
  });
}

class Search {
  constructor(region) {
    this.region = region;
    this.input = region.querySelector('input[type="search"]');
    this.panel = region.querySelector(".site-search-panel");
    this.status = region.querySelector('[role="status"]');
    this.list = region.querySelector(".site-search-results");
    this.words = region.dataset;
    this.pagefind = null; // a promise of the loaded module, once asked for
    this.loaded = false;
    this.timer = null;
    this.latest = 0; // the newest query's number: answers to older ones are dropped

    // Fetch the index's entry point as soon as the reader shows interest, before the first letter.
    this.input.addEventListener("focus", () => this.load().catch(() => {}), { once: true });
    this.input.addEventListener("focus", () => this.reopen());
    this.input.addEventListener("input", () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.run(this.input.value), DEBOUNCE_MS);
    });
    region.addEventListener("keydown", (event) => this.key(event));
    region.addEventListener("focusout", (event) => {
      if (!region.contains(event.relatedTarget)) this.panel.hidden = true;
    });
    document.addEventListener("pointerdown", (event) => {
      if (!region.contains(event.target)) this.panel.hidden = true;
    });
    this.input.disabled = false;
    region.dataset.ready = "";
  }

  load() {
    this.pagefind ??= loadPagefind().catch((error) => {
      this.pagefind = null; // the next query tries again
      throw error;
    });
    return this.pagefind;
  }

  async run(query) {
    const number = ++this.latest;
    if (!query.trim()) {
      this.clear();
      return;
    }
    this.panel.hidden = false;
    let shown;
    try {
      const pending = this.load();
      if (!this.loaded) this.say(this.words.textLoading);
      const pagefind = await pending;
      this.loaded = true;
      const search = await pagefind.search(asIndexed(query));
      if (number !== this.latest) return;
      shown = await holding(search.results, query);
    } catch (error) {
      if (number === this.latest) {
        this.list.replaceChildren();
        this.say(error instanceof Unreachable || navigator.onLine === false ? this.words.textOffline : this.words.textFailed);
      }
      return;
    }
    if (number !== this.latest) return;
    this.list.replaceChildren(...shown.data.map((page) => this.item(page)));
    this.say(this.count(shown.total));
  }

  item(page) {
    const item = document.createElement("li");
    const link = document.createElement("a");
    link.href = page.url;
    link.textContent = (page.meta?.title || page.url).replace(WORD_SEPARATORS, "");
    const excerpt = document.createElement("p");
    excerpt.className = "site-search-excerpt";
    excerpt.append(...excerptNodes(page.excerpt ?? ""));
    item.append(link, excerpt);
    return item;
  }

  count(total) {
    if (total === 0) return this.words.textNone;
    if (total === 1) return this.words.textOne;
    return this.words.textMany.replace("{count}", String(total));
  }

  say(text) {
    this.status.textContent = text;
  }

  clear() {
    this.latest += 1;
    clearTimeout(this.timer);
    this.list.replaceChildren();
    this.say("");
    this.panel.hidden = true;
  }

  reopen() {
    if (this.input.value.trim() && this.status.textContent) this.panel.hidden = false;
  }

  links() {
    return [...this.list.querySelectorAll("a")];
  }

  // Escape empties the box and closes the list; the arrow keys move between the box and the results (Tab does too).
  key(event) {
    if (event.key === "Escape") {
      if (!this.input.value && this.panel.hidden) return;
      event.preventDefault();
      this.input.value = "";
      this.clear();
      this.input.focus();
      return;
    }
    if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
    const links = this.links();
    if (!links.length || this.panel.hidden) return;
    const at = links.indexOf(document.activeElement);
    const step = event.key === "ArrowDown" ? 1 : -1;
    const next = at === -1 ? (step === 1 ? 0 : -1) : at + step;
    event.preventDefault();
    if (next < 0) this.input.focus();
    else links[Math.min(next, links.length - 1)].focus();
  }
}

for (const region of document.querySelectorAll("[data-search]")) new Search(region);
